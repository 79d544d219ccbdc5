"""Turns through a real gunicorn started from the Procfile, the real SDKs and the scripted model.

What only a real server can show: lines reach the client as they happen (not
when the turn ends), a client that hangs up leaves a turn that still saves
its answer, replay and cancel across connections, 409 on a busy session,
heartbeats on a silent stream, many streams at once in one process, and the
server's output free of secrets. Times are compared with each other, never
with fixed milliseconds, so a loaded machine only makes the tests slower.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from hermes.messages import mark_interrupted
from tests.fakes.llm_server import FakeLLM
from tests.web.gunicorn_server import API_KEY, PASSWORD, SECRET_KEY, GunicornServer

HEARTBEAT = 0.5


@pytest.fixture(scope="module")
def fake():
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(fake, tmp_path_factory):
    base = tmp_path_factory.mktemp("gunicorn")
    (base / "home").mkdir()
    (base / "workspace").mkdir()
    env = fake.env("anthropic", api_key=API_KEY)
    running = GunicornServer(
        base / "home",
        base / "workspace",
        env,
        HERMES_WEB_HEARTBEAT_SECONDS=str(HEARTBEAT),
        HERMES_STREAM_TIMEOUT="30",
    ).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def clients():
    """Every client a test made, so the secrets test can read what they received."""
    made = []
    yield made
    for client in made:
        client.close()


@pytest.fixture
def client(server, clients, fake):
    fake.reset()
    made = server.client()
    clients.append(made)
    return made


def leave_session(client, fake) -> None:
    """Start a new chat after one with two user messages: the dashboard summarizes the one
    left in the background, with a model call of its own; give it its reply and wait."""
    fake.reply(text="The user checked that the session is usable.")
    client.new_session()
    deadline = time.monotonic() + 60
    while fake.pending and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake.pending == 0


def test_lines_arrive_as_they_happen_not_when_the_turn_ends(client, fake):
    fake.reply(
        text="The first words come at once; the rest after a pause.", stall=1.5, stall_after=4
    )
    session = client.new_session()
    stream = client.turn(session, "hello")

    assert stream.status == 200
    assert stream.headers["content-type"].startswith("application/x-ndjson")
    assert stream.headers["cache-control"] == "no-cache"
    assert stream.headers["x-accel-buffering"] == "no"
    assert "content-length" not in stream.headers  # chunked: nothing waits for the end
    first_text = next(line for line in stream.lines if line.type == "text")
    done = next(line for line in stream.lines if line.type == "done")
    # The first words were in the client's hands while the model was still silent.
    assert done.at - first_text.at >= 1.2
    assert first_text.at - stream.started < done.at - stream.started - 1.2
    assert stream.done["stop_reason"] == "end_turn"
    assert [e["seq"] for e in stream.events] == list(range(1, len(stream.events) + 1))
    stored = client.session(session)["messages"]
    assert stored[-1]["role"] == "assistant" and stored[-1]["content"] == stream.text


def test_a_client_that_hangs_up_leaves_the_turn_running_and_its_answer_saved(client, fake):
    fake.reply(
        text="An answer nobody is waiting for, saved all the same.", stall=1.0, stall_after=4
    )
    session = client.new_session()
    path = f"/api/sessions/{session}/turns"
    with client.open_stream("POST", path, json={"message": "hello"}) as (stream, lines):
        turn_id = next(lines).data["turn_id"]
    # The connection is closed now, mid-turn.
    follow = client.events(turn_id)
    assert follow.done["stop_reason"] == "end_turn"
    assert follow.text == "An answer nobody is waiting for, saved all the same."
    stored = client.session(session)["messages"]
    assert stored[-1]["content"] == follow.text


def test_replay_after_a_seq_and_a_second_reader_joining_mid_turn(client, fake):
    fake.reply(
        text="one two three four five six seven eight", chunk_size=4, stall=1.0, stall_after=5
    )
    session = client.new_session()
    path = f"/api/sessions/{session}/turns"
    with client.open_stream("POST", path, json={"message": "count"}) as (stream, lines):
        turn_id = next(lines).data["turn_id"]
        joined = {}
        reader = threading.Thread(target=lambda: joined.update(s=client.events(turn_id)))
        reader.start()  # a second tab, following the same turn while it streams
        for _ in lines:
            pass
    reader.join(60)
    assert joined["s"].events == stream.events
    assert client.events(turn_id, after=0).events == stream.events
    assert client.events(turn_id, after=3).events == stream.events[3:]
    assert client.events(turn_id, after=len(stream.events)).events == []
    gone = client.events("f" * 32)
    assert gone.status == 404 and gone.json()["error"]["code"] == "not_found"
    bad = client.events(turn_id, after="-1")
    assert bad.status == 400


def test_cancel_ends_the_stream_with_done_cancelled_and_keeps_the_partial_text(client, fake):
    fake.reply(text="Words that arrive before a long, long silence", stall=60, stall_after=5)
    fake.reply(text="The session is free again.")
    session = client.new_session()
    path = f"/api/sessions/{session}/turns"
    with client.open_stream("POST", path, json={"message": "hello"}) as (stream, lines):
        for line in lines:
            if line.type == "text":
                answer = client.request("POST", f"/api/turns/{line.data['turn_id']}/cancel")
                assert answer.status_code == 202
                assert answer.json()["turn"]["cancel_requested"] is True
                break
        for _ in lines:
            pass
    assert stream.done["stop_reason"] == "cancelled"
    assert stream.lines[-1].at - stream.started < 30  # not the model's 60 s silence
    stored = client.session(session)["messages"]
    assert stored[-1]["role"] == "assistant" and stored[-1]["content"] == mark_interrupted(
        stream.text
    )
    again = client.request("POST", f"/api/turns/{stream.done['turn_id']}/cancel")
    assert again.status_code == 200 and again.json()["turn"]["status"] == "finished"
    assert client.turn(session, "still there?").done["stop_reason"] == "end_turn"
    leave_session(client, fake)


def test_a_second_turn_on_a_busy_session_answers_409_with_the_running_turn(client, fake):
    fake.reply(text="busy busy busy", stall=1.0, stall_after=4)
    fake.reply(text="now it is free")
    session = client.new_session()
    path = f"/api/sessions/{session}/turns"
    with client.open_stream("POST", path, json={"message": "first"}) as (stream, lines):
        turn_id = next(lines).data["turn_id"]
        second = client.request("POST", path, json={"message": "second"})
        assert second.status_code == 409
        error = second.json()["error"]
        assert error["code"] == "session_busy" and error["turn_id"] == turn_id
        for _ in lines:
            pass
    final = client.turn(session, "second")
    assert final.done["stop_reason"] == "end_turn"
    leave_session(client, fake)


def test_a_silent_stream_carries_heartbeats_without_seq(client, fake):
    fake.reply(text="Thinking... done.", stall=2.5, stall_after=4)
    session = client.new_session()
    stream = client.turn(session, "think")
    pings = [line for line in stream.lines if line.type == "ping"]
    assert len(pings) >= 2
    assert all(line.data == {"type": "ping"} for line in pings)
    # The pings came during the silence, between the first text and the rest.
    first_text = next(line for line in stream.lines if line.type == "text")
    assert all(ping.at > first_text.at for ping in pings)
    assert stream.done["stop_reason"] == "end_turn"
    replay = client.events(stream.done["turn_id"])
    assert [line.type for line in replay.lines if line.type == "ping"] == []  # never stored


def test_bad_requests_to_the_turn_routes_answer_json_errors(client, fake):
    session = client.new_session()
    path = f"/api/sessions/{session}/turns"
    cases = [
        ({"content": "not json", "headers": {"Content-Type": "application/json"}}, 400),
        ({"json": {"message": ""}}, 400),
        ({"json": {"message": 5}}, 400),
        ({"json": {"text": "hi"}}, 400),
        ({"json": ["hi"]}, 400),
    ]
    for kwargs, status in cases:
        answer = client.request("POST", path, **kwargs)
        assert answer.status_code == status, (kwargs, answer.text)
        assert answer.json()["error"]["code"]
    assert (
        client.request("POST", "/api/sessions/999999/turns", json={"message": "hi"}).status_code
        == 404
    )
    assert client.request("POST", "/api/turns/../cancel").status_code == 404
    assert client.session(session)["messages"] == []
    assert fake.requests == []  # nothing reached the model


def test_anonymous_and_cross_site_requests_to_turns_are_refused(server, client, fake):
    import httpx

    session = client.new_session()
    anonymous = httpx.post(f"{server.url}/api/sessions/{session}/turns", json={"message": "hi"})
    assert anonymous.status_code == 401
    no_token = client.http.post(f"/api/sessions/{session}/turns", json={"message": "hi"})
    assert no_token.status_code in (400, 403)
    assert httpx.get(f"{server.url}/api/turns/{'a' * 32}/events").status_code == 401
    assert fake.requests == []


def test_32_streams_at_once_in_one_process(server, client, fake):
    fake.reply(text="warm up")
    client.turn(client.new_session(), "warm up")
    for _ in range(33):
        fake.reply(text="Streaming alongside many others, word by word.", stall=1.0, stall_after=4)
    sessions = [client.new_session() for _ in range(32)]
    alone_started = time.monotonic()
    alone = client.turn(client.new_session(), "alone")
    alone_seconds = time.monotonic() - alone_started
    assert alone.done["stop_reason"] == "end_turn"

    others = [server.client() for _ in range(4)]  # a few browsers, eight tabs each
    started = time.monotonic()
    with ThreadPoolExecutor(32) as threads:
        streams = list(
            threads.map(lambda n: others[n % 4].turn(sessions[n], f"turn {n}"), range(32))
        )
    together_seconds = time.monotonic() - started
    for other in others:
        other.close()

    assert [s.done["stop_reason"] for s in streams] == ["end_turn"] * 32
    assert {s.text for s in streams} == {"Streaming alongside many others, word by word."}
    assert len({s.done["turn_id"] for s in streams}) == 32
    # All 32 ran at once: one after another would take 32 times as long.
    assert together_seconds < alone_seconds * 8, (together_seconds, alone_seconds)
    assert server.worker_pid()  # still the one worker


def test_nothing_the_server_wrote_contains_a_secret(server, clients):
    """Runs last in this module: every response and header the clients got, and the
    server's own output and log file."""
    written = [server.output()]
    log_file = server.home / "hermes.log"
    if log_file.exists():
        written.append(log_file.read_text(errors="replace"))
    for client in clients:
        written += client.seen
    everything = "\n".join(written)
    assert len(clients) > 3 and "turn_start" in everything
    for secret in (PASSWORD, SECRET_KEY, API_KEY):
        assert secret not in everything
