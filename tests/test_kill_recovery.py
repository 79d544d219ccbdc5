"""SIGKILL a real `hermes chat` process mid-turn, then continue its session.

The killed process gets no chance to clean up, so whatever it left in the
database must already be valid, or be repaired by the next process: the
strict scripted server refuses (400) any history the real APIs would refuse.
Run on both wire formats.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes.messages import INTERRUPTED_MARK, TOOL_INTERRUPTED
from tests.helpers import clean_environ
from tests.helpers import run_hermes as hermes

THREE_TOOLS = [("list_dir", {}), ("list_dir", {}), ("list_dir", {})]


@pytest.fixture
def env(hermes_home, workspace, fake_llm, wire):
    return clean_environ(
        **fake_llm.env(wire),
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_MAX_RETRIES="0",
    )


@pytest.fixture
def database(hermes_home) -> Path:
    return hermes_home / "hermes.db"


def start_chat(args: list[str], env, cwd) -> subprocess.Popen:
    # Its own process group, so the kill takes the tool's child processes too.
    return subprocess.Popen(
        [sys.executable, "-m", "hermes", "chat", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=10)
    assert process.returncode == -signal.SIGKILL


def query(database: Path, sql: str) -> list[tuple]:
    if not database.exists():
        return []
    with sqlite3.connect(database, timeout=10) as connection:
        try:
            return connection.execute(sql).fetchall()
        except sqlite3.OperationalError:
            return []  # not migrated yet


def wait_for(condition, what: str, timeout: float = 40.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def continue_session(env, workspace, fake_llm) -> subprocess.CompletedProcess:
    fake_llm.reply(text="Picking up where we left off.")
    result = hermes(["chat", "-q", "what happened?", "--session", "1"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Picking up where we left off."
    assert fake_llm.rejected == []
    return result


def turn_states(database: Path) -> list[tuple]:
    return query(database, "SELECT status, stop_reason FROM turns ORDER BY started_at")


def test_killed_during_a_tool(env, workspace, fake_llm, database):
    fake_llm.reply(text="Let me wait.", tool_calls=[("run_bash", {"command": "sleep 60"})])
    chat = start_chat(["-q", "wait a minute"], env, workspace)
    try:
        # The tool runs only after its call is stored.
        wait_for(lambda: len(fake_llm.requests) == 1, "the model call")
        wait_for(
            lambda: query(database, "SELECT 1 FROM messages WHERE tool_calls LIKE '%run_bash%'"),
            "the stored tool call",
        )
        time.sleep(0.5)  # well inside `sleep 60`
    finally:
        kill(chat)

    continue_session(env, workspace, fake_llm)
    rows = query(database, "SELECT role, content FROM messages ORDER BY position")
    assert [r[0] for r in rows] == ["user", "assistant", "tool", "user", "assistant"]
    assert rows[2][1] == TOOL_INTERRUPTED
    assert turn_states(database) == [("finished", "interrupted"), ("finished", "end_turn")]
    # The second request carried the repaired exchange.
    assert TOOL_INTERRUPTED in str(fake_llm.last_request.json["messages"])
    # The usage of the call made before the kill was saved.
    assert query(database, "SELECT input_tokens FROM sessions")[0][0] == 20


def test_killed_while_the_answer_streams(env, workspace, fake_llm, database):
    story = "Once upon a time there was a small lighthouse by a cold grey sea. " * 3
    fake_llm.reply(text=story, chunk_size=6, stall=60.0, stall_after=12)
    chat = start_chat(["-q", "tell me a story"], env, workspace)
    try:
        wait_for(
            lambda: query(database, "SELECT 1 FROM messages WHERE role = 'assistant' AND partial"),
            "the checkpointed partial answer",
        )
    finally:
        kill(chat)

    continue_session(env, workspace, fake_llm)
    rows = query(database, "SELECT role, content, partial FROM messages ORDER BY position")
    assert [r[0] for r in rows] == ["user", "assistant", "user", "assistant"]
    kept = rows[1][1]
    assert kept.endswith(INTERRUPTED_MARK) and not rows[1][2]
    assert story.startswith(kept.removesuffix(INTERRUPTED_MARK).strip()[:20])
    assert INTERRUPTED_MARK in str(fake_llm.last_request.json["messages"])
    assert turn_states(database)[0] == ("finished", "interrupted")


def test_killed_during_curation(env, workspace, fake_llm, database):
    fake_llm.reply(tool_calls=THREE_TOOLS)
    fake_llm.reply(text="Looked three times.")
    fake_llm.add({"text": "NAME: x\nDESCRIPTION: y\nBODY:\nz", "delay": 60.0})
    chat = start_chat(["-q", "look around thrice"], env, workspace)
    try:
        wait_for(lambda: len(fake_llm.requests) == 3, "the curator's model call")
    finally:
        kill(chat)

    # The answer was complete and the turn finished before the curator began.
    assert turn_states(database) == [("finished", "end_turn")]
    continue_session(env, workspace, fake_llm)
    roles = [r[0] for r in query(database, "SELECT role FROM messages ORDER BY position")]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "assistant", "user", "assistant"]


def test_a_busy_session_says_which_turn_is_running(env, workspace, fake_llm, database):
    fake_llm.reply(text="Thinking very slowly", stall=60.0, stall_after=4)
    first = start_chat(["-q", "think hard"], env, workspace)
    try:
        wait_for(lambda: turn_states(database) == [("running", None)], "the running turn")
        running = query(database, "SELECT id FROM turns")[0][0]
        second = hermes(["chat", "-q", "me too", "--session", "1"], env=env, cwd=workspace)
    finally:
        kill(first)
    assert second.returncode != 0
    assert running in second.stderr and "busy" in second.stderr
    assert "Traceback" not in second.stderr
    # Nothing of the refused message was written.
    assert "me too" not in str(query(database, "SELECT content FROM messages"))


def test_max_tokens_and_refusal_are_told_to_the_user(env, workspace, fake_llm):
    fake_llm.reply(text="The first half of a long", stop_reason="max_tokens")
    cut = hermes(["chat", "-q", "explain everything"], env=env, cwd=workspace)
    assert cut.returncode == 0, cut.stderr
    assert cut.stdout.startswith("The first half of a long")
    assert "cut off" in cut.stderr and "max_tokens" in cut.stderr

    fake_llm.reply(text="I can't help with that.", stop_reason="refusal")
    refused = hermes(["chat", "-q", "something forbidden"], env=env, cwd=workspace)
    assert refused.returncode == 0, refused.stderr
    assert "I can't help with that." in refused.stdout
    assert "declined" in refused.stderr

    fake_llm.reply(text="{}", stop_reason="refusal")
    as_json = hermes(["chat", "-q", "again", "--json"], env=env, cwd=workspace)
    assert '"stop_reason": "refusal"' in as_json.stdout.splitlines()[-1]
