"""A turn can never corrupt a session: busy sessions, closed generators, dead owners.

Every turn here runs through the real SDKs against the strict scripted
server, which answers an invalid history with the provider's own 400, so a
session left broken shows up as a failed next turn.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import text

from hermes.errors import SessionBusy
from hermes.events import ToolCall
from hermes.messages import INTERRUPTED_MARK, TOOL_INTERRUPTED, Message
from hermes.runtime import Runtime
from hermes.store import Store
from hermes.store import turns as turn_registry
from hermes.store.engine import write_transaction

THREE_TOOLS = [("list_dir", {}), ("list_dir", {}), ("list_dir", {})]
SKILL_ANSWER = (
    "NAME: look-around\nDESCRIPTION: List the workspace three times. Use when asked to look.\n"
    "TRIGGERS: look\nBODY:\n1. List the workspace.\n"
)


@pytest.fixture
def runtime(make_config, fake_llm, wire):
    rt = Runtime(make_config(**fake_llm.config_overrides(wire), max_retries=1))
    yield rt
    rt.close()


def roles(store, session_id):
    return [m.message.role for m in store.messages(session_id)]


def continue_session(runtime, fake_llm, session_id, answer="Carrying on."):
    """The next turn must be accepted by the strict server (a valid history)."""
    fake_llm.reply(text=answer)
    events = list(runtime.agent().run_turn(session_id, "please continue"))
    assert fake_llm.rejected == []
    assert events[-1].stop_reason == "end_turn", [e for e in events if e.type == "error"]
    return events


# -- the turn registry --------------------------------------------------------


def test_two_threads_start_turns_on_one_session_and_exactly_one_runs(runtime, fake_llm):
    fake_llm.reply(text="The slow answer.", delay=1.0)
    fake_llm.reply(text="This reply must never be asked for.")
    session_id = runtime.store.create_session().id
    agent = runtime.agent()
    barrier = threading.Barrier(2)
    started, refused = [], []

    def start(n: int) -> None:
        barrier.wait()
        try:
            events = agent.run_turn(session_id, f"message {n}", turn_id=f"turn-{n}")
        except SessionBusy as exc:
            refused.append(exc)
            return
        started.append(list(events))

    threads = [threading.Thread(target=start, args=(n,)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert len(started) == 1 and len(refused) == 1
    winner = started[0]
    assert winner[-1].stop_reason == "end_turn"
    busy = refused[0]
    assert busy.turn_id in ("turn-1", "turn-2") and busy.code == "session_busy"
    assert busy.turn_id in busy.message
    # The refused turn wrote nothing: one user message, one answer.
    stored = runtime.store.messages(session_id)
    assert [m.message.role for m in stored] == ["user", "assistant"]
    assert stored[0].turn_id == busy.turn_id
    assert len(fake_llm.requests) == 1
    assert runtime.store.running_turn(session_id) is None


def test_a_session_is_busy_while_its_turn_runs_and_free_at_done(runtime, fake_llm):
    fake_llm.reply(text="Working on it, slowly.", stall=1.0, stall_after=3)
    session_id = runtime.store.create_session().id
    events = runtime.agent().run_turn(session_id, "hello", turn_id="first")
    assert runtime.store.running_turn(session_id) == "first"
    with pytest.raises(SessionBusy) as busy:
        runtime.agent().run_turn(session_id, "me too")
    assert busy.value.turn_id == "first"
    for event in events:
        if event.type == "done":
            assert runtime.store.running_turn(session_id) is None
    with runtime.store.engine.connect() as connection:
        row = connection.execute(
            text("SELECT status, stop_reason, pid, host FROM turns WHERE id = 'first'")
        ).one()
    assert tuple(row[:2]) == ("finished", "end_turn")
    assert row.pid is not None and row.host


def running_turn_of_a_dead_process(store: Store, session_id: int) -> None:
    """A running turn "dead" whose owner (this host, a pid that has exited) is gone."""
    with write_transaction(store.engine) as connection:
        connection.execute(
            text(
                "INSERT INTO turns (id, session_id, status, started_at, pid, host) "
                "VALUES ('dead', :session, 'running', '2025-01-01 10:00:00.000000', :pid, :host)"
            ),
            {"session": session_id, "pid": _dead_pid(), "host": turn_registry.HOST},
        )


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_stale_running_turn_of_a_dead_process_is_closed_at_start_up(config):
    with Store.open(config) as store:
        session_id = store.create_session().id
        store.add_message(session_id, Message("user", "tell me a long story"), turn_id="dead")
        store.add_message(
            session_id,
            Message("assistant", "Once upon a time"),
            turn_id="dead",
            partial=True,
        )
        running_turn_of_a_dead_process(store, session_id)
        assert store.running_turn(session_id) is None  # seen as stale even before a restart

    with write_transaction(Store.open(config).engine) as connection:
        connection.execute(text("UPDATE turns SET status = 'running' WHERE id = 'dead'"))
    with Store.open(config) as store:  # start-up closes it
        with store.engine.connect() as connection:
            status = connection.execute(
                text("SELECT status, stop_reason FROM turns WHERE id = 'dead'")
            ).one()
        assert tuple(status) == ("finished", "interrupted")
        answer = store.messages(session_id)[-1].message.content
        assert answer == f"Once upon a time\n\n{INTERRUPTED_MARK}"
        store.start_turn(session_id, "next")  # the session is free


def test_a_turn_that_replaces_a_stale_one_meanwhile_keeps_its_open_tool_call(config, monkeypatch):
    """running_turn sees a stale turn; before it closes it, another request closes it and
    starts a new turn that calls a tool. That call is running: it must not get a result."""
    store = Store.open(config)
    session_id = store.create_session().id
    store.add_message(session_id, Message("user", "hi"), turn_id="dead")
    running_turn_of_a_dead_process(store, session_id)
    really_stale = turn_registry.is_stale
    started = []

    def stale_and_meanwhile_replaced(row, now=None):
        stale = really_stale(row, now)
        if stale and not started:
            started.append(True)
            store.start_turn(session_id, "live")  # closes "dead" itself
            store.add_message(session_id, Message("user", "list"), turn_id="live")
            call = ToolCall(id="toolu_live", name="list_dir", input={})
            store.add_message(session_id, Message("assistant", "", (call,)), turn_id="live")
        return stale

    monkeypatch.setattr(turn_registry, "is_stale", stale_and_meanwhile_replaced)
    assert store.running_turn(session_id) == "live"
    monkeypatch.undo()
    result = Message("tool", "a.txt b.txt", tool_call_id="toolu_live", tool_name="list_dir")
    store.add_message(session_id, result, turn_id="live")
    replies = [m for m in store.model_history(session_id, turn_id="live") if m.role == "tool"]
    assert [m.content for m in replies] == ["a.txt b.txt"]
    store.close()


def test_a_running_turn_of_a_live_process_keeps_the_session_busy(config):
    with Store.open(config) as store:
        session_id = store.create_session().id
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            with write_transaction(store.engine) as connection:
                connection.execute(
                    text(
                        "INSERT INTO turns (id, session_id, status, started_at, heartbeat_at, "
                        "pid, host) VALUES ('alive', :session, 'running', :now, :now, :pid, :host)"
                    ),
                    {
                        "session": session_id,
                        "now": "2099-01-01 00:00:00.000000",
                        "pid": sleeper.pid,
                        "host": turn_registry.HOST,
                    },
                )
            with pytest.raises(SessionBusy):
                store.start_turn(session_id, "mine")
        finally:
            sleeper.kill()
            sleeper.wait()
        store.start_turn(session_id, "mine")  # its owner is gone now


# -- closing the events early -------------------------------------------------


def test_closing_the_events_after_a_tool_call_leaves_a_valid_session(runtime, fake_llm):
    fake_llm.reply(text="Let me look.", tool_calls=[("list_dir", {}), ("list_dir", {})])
    session_id = runtime.store.create_session().id
    events = runtime.agent().run_turn(session_id, "what is here?")
    for event in events:
        if event.type == "tool_call":
            break
    events.close()  # a browser that left, a server thread stopped

    stored = runtime.store.messages(session_id)
    assert [m.message.role for m in stored] == ["user", "assistant", "tool", "tool"]
    assert all(m.message.content == TOOL_INTERRUPTED for m in stored[2:])
    assert runtime.store.running_turn(session_id) is None
    with runtime.store.engine.connect() as connection:
        reason = connection.execute(text("SELECT stop_reason FROM turns")).scalar()
    assert reason == "interrupted"
    continue_session(runtime, fake_llm, session_id)


def test_an_abandoned_turn_that_was_never_read_frees_its_session(runtime, fake_llm):
    fake_llm.reply(text="Never read.")
    session_id = runtime.store.create_session().id
    events = runtime.agent().run_turn(session_id, "hello")
    del events  # dropped without a single read
    assert runtime.store.running_turn(session_id) is None
    continue_session(runtime, fake_llm, session_id)


def test_a_session_broken_by_an_older_version_is_repaired_once(runtime, fake_llm):
    store = runtime.store
    session_id = store.create_session().id
    store.add_message(session_id, Message("user", "list it"))
    calls = (__import__("hermes.events").events.ToolCall("toolu_old", "list_dir", {}),)
    store.add_message(session_id, Message("assistant", "", tool_calls=calls))
    store.add_message(session_id, Message("user", "hello again?"))
    store.add_message(session_id, Message("assistant", "Hello."))
    store.add_message(
        session_id, Message("tool", "stray", tool_call_id="toolu_nobody", tool_name="list_dir")
    )

    continue_session(runtime, fake_llm, session_id)
    stored = [m.message for m in store.messages(session_id)]
    assert [m.role for m in stored[:4]] == ["user", "assistant", "tool", "user"]
    assert stored[2].content == TOOL_INTERRUPTED and stored[2].tool_call_id == "toolu_old"
    count = len(stored)
    continue_session(runtime, fake_llm, session_id)
    assert len(store.messages(session_id)) == count + 2  # repaired once, not again
    assert "stray" not in str(fake_llm.last_request.json["messages"])


# -- the answer is saved while it streams ---------------------------------------


def test_a_streaming_answer_is_checkpointed_and_the_final_replaces_it(runtime, fake_llm):
    answer = "Part one of the answer, then a long pause, then the rest of it."
    fake_llm.reply(text=answer, chunk_size=8, stall=3.0, stall_after=5)
    session_id = runtime.store.create_session().id
    events = runtime.agent().run_turn(session_id, "go")
    seen_partial = None
    for event in events:
        if event.type == "text" and seen_partial is None:
            deadline = time.monotonic() + 2.5
            while time.monotonic() < deadline:
                stored = runtime.store.messages(session_id)
                if len(stored) == 2:
                    seen_partial = stored[1].message.content
                    break
                time.sleep(0.05)
    assert seen_partial and answer.startswith(seen_partial) and seen_partial != answer
    stored = runtime.store.messages(session_id)
    assert [m.message.role for m in stored] == ["user", "assistant"]
    assert stored[1].message.content == answer


def test_a_cancelled_answer_keeps_the_interrupted_mark_for_the_model(runtime, fake_llm):
    fake_llm.reply(text="Volcanoes form where magma rises", stall=8.0, stall_after=4)
    cancel = threading.Event()
    session_id = runtime.store.create_session().id
    for event in runtime.agent().run_turn(session_id, "volcanoes?", cancel=cancel):
        if event.type == "text":
            cancel.set()
    assert runtime.store.messages(session_id)[-1].message.content.endswith(INTERRUPTED_MARK)
    continue_session(runtime, fake_llm, session_id)
    assert INTERRUPTED_MARK in str(fake_llm.last_request.json["messages"])


def test_the_assistant_message_is_stored_before_its_tool_runs(make_config, fake_llm, wire):
    # The probe reads Hermes' own database, which the approval gate flags (it is in
    # HERMES_HOME): this test's user approves everything.
    config = make_config(**fake_llm.config_overrides(wire), max_retries=1, approvals="auto")
    runtime = Runtime(config)
    database = config.database_url.removeprefix("sqlite:///")
    probe = (
        f"{sys.executable} -c \"import sqlite3; c = sqlite3.connect('{database}'); "
        "print('stored calls:', c.execute(\\\"SELECT count(*) FROM messages WHERE role = "
        "'assistant' AND tool_calls LIKE '%run_bash%'\\\").fetchone()[0])\""
    )
    fake_llm.reply(tool_calls=[("run_bash", {"command": probe})])
    fake_llm.reply(text="Checked.")
    session_id = runtime.store.create_session().id
    try:
        events = list(runtime.agent().run_turn(session_id, "check"))
    finally:
        runtime.close()
    result = next(e for e in events if e.type == "tool_result")
    assert "stored calls: 1" in result.output, result.output


# -- stop reasons ---------------------------------------------------------------


def test_an_answer_cut_by_max_tokens_says_so(runtime, fake_llm):
    fake_llm.reply(
        text="The first half of an answer", tool_calls=[("list_dir", {})], stop_reason="max_tokens"
    )
    session_id = runtime.store.create_session().id
    events = list(runtime.agent().run_turn(session_id, "explain everything"))
    assert events[-1].stop_reason == "max_tokens"
    assert "tool_call" not in [e.type for e in events]  # a cut call never runs
    stored = runtime.store.messages(session_id)[-1].message
    assert stored.content == f"The first half of an answer\n\n{INTERRUPTED_MARK}"
    assert stored.tool_calls == ()
    continue_session(runtime, fake_llm, session_id)


def test_an_answer_cut_by_the_context_window_is_cut_like_max_tokens(runtime, fake_llm, wire):
    if wire != "anthropic":
        pytest.skip("model_context_window_exceeded is Anthropic's stop reason")
    fake_llm.reply(
        text="Half",
        tool_calls=[("list_dir", {})],
        stop_reason="model_context_window_exceeded",
    )
    session_id = runtime.store.create_session().id
    events = list(runtime.agent().run_turn(session_id, "explain everything"))
    assert events[-1].stop_reason == "max_tokens"
    assert "tool_call" not in [e.type for e in events]


def test_a_refusal_is_kept_for_the_user_but_never_replayed(runtime, fake_llm):
    fake_llm.reply(text="Sure, the weather is mild.")
    session_id = runtime.store.create_session().id
    list(runtime.agent().run_turn(session_id, "weather?"))
    fake_llm.reply(text="I can't help with that.", stop_reason="refusal")
    events = list(runtime.agent().run_turn(session_id, "something forbidden"))
    assert events[-1].stop_reason == "refusal"
    assert "I can't help with that." in "".join(e.delta for e in events if e.type == "text")
    assert roles(runtime.store, session_id) == ["user", "assistant", "user", "assistant"]

    continue_session(runtime, fake_llm, session_id)
    sent = str(fake_llm.last_request.json["messages"])
    assert "weather?" in sent and "please continue" in sent
    assert "something forbidden" not in sent and "I can't help" not in sent
    # Nor do the curator, /learn and the session summary read it.
    assert "something forbidden" not in str(runtime.store.history(session_id))
    fake_llm.reply(text="The user asked about the weather.")
    runtime.summarize_session(session_id)
    assert "something forbidden" not in str(fake_llm.last_request.json["messages"])


# -- the curator comes after done -------------------------------------------------


def test_done_comes_before_the_curator_and_a_cancel_stops_it_at_once(runtime, fake_llm):
    fake_llm.reply(tool_calls=THREE_TOOLS)
    fake_llm.reply(text="Looked three times.")
    fake_llm.add({"text": SKILL_ANSWER, "delay": 30.0})  # a curator that takes forever
    cancel = threading.Event()
    session_id = runtime.store.create_session().id
    events = runtime.agent().run_turn(session_id, "look around thrice", cancel=cancel)
    seen, cancelled_at = [], []

    def cancel_once_the_curator_asks() -> None:
        deadline = time.monotonic() + 20
        while len(fake_llm.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        cancelled_at.append(time.monotonic())
        cancel.set()

    for event in events:
        seen.append(event.type)
        if event.type == "done":
            assert runtime.store.running_turn(session_id) is None  # free for the next turn
            threading.Thread(target=cancel_once_the_curator_asks).start()
    ended = time.monotonic() - cancelled_at[0]
    assert seen[-2:] == ["usage", "done"] and "skill" not in seen
    assert len(fake_llm.requests) == 3  # the curator's call was made, then abandoned
    assert ended < 5.0, f"the curator held the turn {ended:.1f}s after the cancel"


def test_the_curator_is_bounded_in_time(make_config, fake_llm, wire):
    config = make_config(**fake_llm.config_overrides(wire), max_retries=0, curator_timeout=1.0)
    runtime = Runtime(config)
    try:
        fake_llm.reply(tool_calls=THREE_TOOLS)
        fake_llm.reply(text="Looked three times.")
        fake_llm.add({"text": SKILL_ANSWER, "delay": 30.0})
        session_id = runtime.store.create_session().id
        started = time.monotonic()
        events = list(runtime.agent().run_turn(session_id, "look around thrice"))
        assert events[-1].type == "done"
        assert time.monotonic() - started < 15.0
    finally:
        runtime.close()


def test_a_turn_of_another_host_is_stale_only_once_its_heartbeat_stops(config):
    with Store.open(config) as store:
        session_id = store.create_session().id

        def running_elsewhere(turn_id: str, heartbeat: str) -> None:
            with write_transaction(store.engine) as connection:
                connection.execute(
                    text(
                        "INSERT INTO turns (id, session_id, status, started_at, heartbeat_at, "
                        "pid, host) VALUES (:id, :session, 'running', :beat, :beat, 1, 'elsewhere')"
                    ),
                    {"id": turn_id, "session": session_id, "beat": heartbeat},
                )

        recent = (turn_registry.utcnow()).strftime("%Y-%m-%d %H:%M:%S.%f")
        running_elsewhere("beating", recent)
        with pytest.raises(SessionBusy):
            store.start_turn(session_id, "mine")
        with write_transaction(store.engine) as connection:
            connection.execute(text("UPDATE turns SET heartbeat_at = '2025-01-01 00:00:00'"))
        store.start_turn(session_id, "mine")  # its heartbeat stopped long ago


def test_deleting_a_session_while_its_turn_runs_ends_the_turn_cleanly(runtime, fake_llm):
    fake_llm.reply(text="Still talking", stall=1.5, stall_after=3)
    session_id = runtime.store.create_session().id
    events = runtime.agent().run_turn(session_id, "hello")
    next(events)  # turn_start
    runtime.store.delete_session(session_id)  # the web's DELETE, mid-turn
    rest = list(events)
    assert rest[-1].type == "done" and rest[-1].stop_reason == "error"
