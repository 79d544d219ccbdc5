"""The server's life around running turns: a stream that ends itself before a proxy cuts
it, a graceful stop (SIGTERM), and a crash (SIGKILL) followed by a restart.

Each test gets its own gunicorn, started from the Procfile's web line.
"""

from __future__ import annotations

import sqlite3
import time

import pytest

from hermes.messages import INTERRUPTED_MARK, mark_interrupted
from tests.fakes.llm_server import FakeLLM
from tests.web.gunicorn_server import API_KEY, GunicornServer


@pytest.fixture
def fake():
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def make_server(fake, tmp_path):
    """Start a gunicorn on this test's HERMES_HOME (the same home on every call)."""
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    started = []

    def make(**env: str) -> GunicornServer:
        server = GunicornServer(
            home,
            workspace,
            fake.env("anthropic", api_key=API_KEY),
            HERMES_STREAM_TIMEOUT="60",
            **env,
        ).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def follow_to_done(client, first) -> list:
    """What the page does: resume after the last seq seen until done comes."""
    rounds = [first]
    turn_id = first.events[0]["turn_id"]
    while rounds[-1].done is None and len(rounds) < 40:
        last_seq = max(e["seq"] for r in rounds for e in r.events)
        rounds.append(client.events(turn_id, after=last_seq))
    return rounds


def test_a_stream_ends_itself_before_the_proxy_cap_and_the_client_resumes(make_server, fake):
    server = make_server(HERMES_WEB_STREAM_MAX_SECONDS="1.5", HERMES_WEB_HEARTBEAT_SECONDS="0.5")
    client = server.client()
    fake.reply(text="warm up")
    # The first turn of a worker is the slowest; see it through before the real one.
    follow_to_done(client, client.turn(client.new_session(), "warm up"))
    fake.reply(text="Before the long pause. And after it.", stall=4, stall_after=5)
    session = client.new_session()
    rounds = follow_to_done(client, client.turn(session, "hello"))
    turn_id = rounds[0].events[0]["turn_id"]
    assert len(rounds) >= 2, "the first stream should have ended before done"
    for early in rounds[:-1]:
        assert early.status == 200 and early.done is None
        assert early.lines[-1].at - early.started < 3.5  # ended by itself, not by the turn
    received = [e for r in rounds for e in r.events]
    assert received == client.events(turn_id).events  # nothing lost, nothing twice
    assert "".join(r.text for r in rounds) == "Before the long pause. And after it."
    assert rounds[-1].done["stop_reason"] == "end_turn"


def test_sigterm_cancels_running_turns_at_a_safe_point_and_the_restart_finds_the_session_free(
    make_server, fake
):
    server = make_server()
    client = server.client()
    fake.reply(text="Half an answer when the deploy came", stall=120, stall_after=5)
    session = client.new_session()
    path = f"/api/sessions/{session}/turns"
    with client.open_stream("POST", path, json={"message": "hello"}) as (stream, lines):
        for line in lines:
            if line.type == "text":
                break
        stopped_at = time.monotonic()
        server.process.send_signal(15)  # what a platform sends before replacing the container
        for _ in lines:
            pass
    assert stream.done is not None and stream.done["stop_reason"] == "cancelled"
    assert stream.lines[-1].at - stopped_at < 15  # not the model's two minutes
    assert server.process.wait(60) == 0

    restarted = make_server()
    client = restarted.client()
    info = client.session(session)
    assert info["session"]["running_turn_id"] is None
    assert info["messages"][-1]["role"] == "assistant"
    assert info["messages"][-1]["content"] == mark_interrupted(stream.text)
    fake.reply(text="Back again.")
    assert client.turn(session, "are you back?").done["stop_reason"] == "end_turn"


def test_sigkill_mid_turn_then_restart_keeps_the_database_whole_and_the_partial_text(
    make_server, fake
):
    server = make_server()
    client = server.client()
    fake.reply(text="Words written before the crash, and then nothing", stall=120, stall_after=6)
    session = client.new_session()
    path = f"/api/sessions/{session}/turns"
    with client.open_stream("POST", path, json={"message": "hello"}) as (stream, lines):
        for line in lines:
            if line.type == "text" and len(stream.text) >= 16:
                break
        turn_id = stream.events[0]["turn_id"]
        time.sleep(2.5)  # the loop checkpoints partial text at most about a second behind
        server.kill()

    database = server.home / "hermes.db"
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    restarted = make_server()
    client = restarted.client()
    info = client.session(session)
    assert info["session"]["running_turn_id"] is None  # the stale turn was closed
    assistant = [m for m in info["messages"] if m["role"] == "assistant"]
    assert assistant and assistant[-1]["content"].startswith(stream.text[:16])
    assert assistant[-1]["content"].endswith(INTERRUPTED_MARK)  # closed as interrupted
    # The old turn's stream is gone with the old process: a pointer to its session.
    gone = client.events(turn_id)
    assert gone.status == 410
    error = gone.json()["error"]
    assert error["code"] == "turn_gone" and error["session_id"] == session
    fake.reply(text="Usable at once.")
    assert client.turn(session, "still there?").done["stop_reason"] == "end_turn"
