"""The TurnPool on its own (no Flask): real turns through the real SDKs and the scripted server."""

from __future__ import annotations

import json
import threading
import time

import pytest

from hermes.errors import NotFound, SessionBusy
from hermes.events import Done, TextDelta, TurnStart
from hermes.messages import mark_interrupted
from hermes.runtime import Runtime
from web import pool as pool_module
from web.pool import PING, PoolClosed, TurnGone, TurnPool


@pytest.fixture
def runtime(make_config, fake_llm):
    rt = Runtime(
        make_config(**fake_llm.config_overrides("anthropic"), max_retries=0), surface="web"
    )
    yield rt
    rt.close()


def make_pool(runtime: Runtime, **options) -> TurnPool:
    def run_turn(session_id, text, *, turn_id, cancel):
        return runtime.agent().run_turn(session_id, text, turn_id=turn_id, cancel=cancel)

    return TurnPool(run_turn, session_of_turn=runtime.store.turn_session, **options)


@pytest.fixture
def pool(runtime):
    p = make_pool(runtime)
    yield p
    p.shutdown(timeout=10)


@pytest.fixture
def session_id(runtime) -> int:
    return runtime.store.create_session(source="web").id


def each_line(chunks):
    """Parse the NDJSON chunks a reader yields as they come (a chunk may hold several lines)."""
    for chunk in chunks:
        for line in chunk.decode().splitlines():
            yield json.loads(line)


def lines(chunks) -> list[dict]:
    return list(each_line(chunks))


def read_all(turn, after=0, **options) -> list[dict]:
    """A reader's events to the end (heartbeats left out: a slow first turn may get some)."""
    return [e for e in lines(turn.read(after, **options)) if e["type"] != "ping"]


def test_events_are_numbered_in_order_and_every_reader_sees_the_same_lines(
    pool, session_id, runtime, fake_llm
):
    fake_llm.reply(text="Hello there, this is a streamed answer.", chunk_size=4)
    turn = pool.start(session_id, "hi")
    first, second = read_all(turn), read_all(turn)
    assert first == second
    assert [e["seq"] for e in first] == list(range(1, len(first) + 1))
    assert {e["turn_id"] for e in first} == {turn.turn_id}
    assert first[0]["type"] == "turn_start" and first[0]["session_id"] == session_id
    assert first[-1]["type"] == "done" and first[-1]["stop_reason"] == "end_turn"
    text = "".join(e["delta"] for e in first if e["type"] == "text")
    assert text == "Hello there, this is a streamed answer."
    # A late reader starting after seq 3 gets exactly the rest.
    assert read_all(turn, after=3) == first[3:]
    assert read_all(turn, after=len(first)) == []
    stored = runtime.store.messages(session_id)
    assert stored[-1].message.content == text


def test_a_reader_that_leaves_never_stops_the_turn(pool, session_id, runtime, fake_llm):
    fake_llm.reply(text="A long answer that keeps going after the tab closes.", stall=0.5)
    turn = pool.start(session_id, "hi")
    reader = turn.read(0)
    next(reader)  # turn_start
    reader.close()  # the client went away
    assert turn.thread.join(10) is None and turn.finished
    assert turn.stop_reason == "end_turn" and not turn.cancel.is_set()
    assert runtime.store.messages(session_id)[-1].message.content.endswith("tab closes.")


def test_cancel_ends_the_turn_at_a_safe_point_and_keeps_the_partial_text(
    pool, session_id, runtime, fake_llm
):
    fake_llm.reply(text="Partial words then a long silence", stall=30, stall_after=4)
    turn = pool.start(session_id, "hi")
    seen = []
    for event in each_line(turn.read(0)):
        seen.append(event)
        if event["type"] == "text" and not turn.cancel.is_set():
            pool.cancel(turn.turn_id)
    assert seen[-1]["type"] == "done" and seen[-1]["stop_reason"] == "cancelled"
    partial = "".join(e["delta"] for e in seen if e["type"] == "text")
    stored = runtime.store.messages(session_id)[-1].message.content
    assert partial and stored == mark_interrupted(partial)  # kept, and marked as cut short
    assert pool.running(session_id) is None


def test_a_second_turn_on_a_busy_session_is_refused_with_the_running_turns_id(
    pool, session_id, runtime, fake_llm
):
    fake_llm.reply(text="slow", stall=1.0, stall_after=2)
    fake_llm.reply(text="second answer")
    turn = pool.start(session_id, "first")
    assert pool.running(session_id) == turn.turn_id
    with pytest.raises(SessionBusy) as busy:
        pool.start(session_id, "second")
    assert busy.value.turn_id == turn.turn_id
    # Another session is free meanwhile.
    other = runtime.store.create_session(source="web").id
    fake_llm.reply(text="other")
    assert read_all(pool.start(other, "hello"))[-1]["stop_reason"] == "end_turn"
    read_all(turn)
    assert pool.running(session_id) is None
    assert read_all(pool.start(session_id, "second"))[-1]["type"] == "done"


def test_errors_before_the_turn_starts_come_out_of_start_and_leave_nothing_busy(pool, fake_llm):
    with pytest.raises(NotFound):
        pool.start(999_999, "hi")
    assert pool.running(999_999) is None
    assert pool.live_turns() == []


def test_a_silent_turn_gets_heartbeats_without_seq(pool, session_id, fake_llm):
    fake_llm.reply(text="thinking hard", stall=1.2, stall_after=2)
    turn = pool.start(session_id, "hi")
    chunks = list(turn.read(0, heartbeat=0.2))
    assert PING in chunks
    events = lines(chunks)
    assert all("seq" not in e for e in events if e["type"] == "ping")
    real = [e for e in events if e["type"] != "ping"]
    assert [e["seq"] for e in real] == list(range(1, len(real) + 1))


def test_a_stream_ends_itself_after_max_seconds_and_resuming_loses_nothing(
    pool, session_id, fake_llm
):
    fake_llm.reply(text="first part, pause, second part", stall=3.0, stall_after=3)
    turn = pool.start(session_id, "hi")
    started = time.monotonic()
    head = read_all(turn, heartbeat=10, max_seconds=0.3)
    assert time.monotonic() - started < 2.5  # it ended by itself, long before the model went on
    assert head and head[-1]["type"] != "done"
    tail = read_all(turn, after=head[-1]["seq"])
    whole = read_all(turn)
    assert head + tail == whole


def test_finished_turns_are_dropped_after_keep_turns_and_then_point_at_their_session(
    runtime, session_id, fake_llm
):
    pool = make_pool(runtime, keep_turns=2)
    turns = []
    for n in range(3):
        fake_llm.reply(text=f"answer {n}")
        turn = pool.start(session_id, f"question {n}")
        read_all(turn)
        turn.thread.join(10)
        turns.append(turn)
    assert pool.kept_turns() == 2
    with pytest.raises(TurnGone) as gone:
        pool.get(turns[0].turn_id)
    assert gone.value.session_id == session_id
    assert pool.get(turns[2].turn_id) is turns[2]
    with pytest.raises(NotFound):
        pool.get("0" * 32)


def test_finished_turns_are_dropped_after_keep_seconds(runtime, session_id, fake_llm):
    pool = make_pool(runtime, keep_seconds=0.3)
    fake_llm.reply(text="answer")
    turn = pool.start(session_id, "question")
    read_all(turn)
    turn.thread.join(10)
    assert pool.get(turn.turn_id) is turn
    time.sleep(0.4)
    with pytest.raises(TurnGone):
        pool.get(turn.turn_id)
    assert pool.kept_turns() == 0


def test_a_full_buffer_drops_its_oldest_lines_and_a_reader_needing_them_is_told(
    pool, session_id, fake_llm, monkeypatch
):
    monkeypatch.setattr(pool_module, "MAX_EVENTS_PER_TURN", 5)
    fake_llm.reply(text="x" * 200, chunk_size=5)
    turn = pool.start(session_id, "hi")
    turn.thread.join(10)
    assert turn.last_seq > 5
    with pytest.raises(TurnGone):
        read_all(turn)
    tail = read_all(turn, after=turn.last_seq - 5)
    assert [e["seq"] for e in tail] == list(range(turn.last_seq - 4, turn.last_seq + 1))


def test_shutdown_cancels_running_turns_and_refuses_new_ones(pool, session_id, runtime, fake_llm):
    fake_llm.reply(text="words before a very long silence", stall=60, stall_after=6)
    turn = pool.start(session_id, "hi")
    reader = turn.read(0)
    while b'"text"' not in next(reader):
        pass
    started = time.monotonic()
    assert pool.shutdown(timeout=10) is True
    assert time.monotonic() - started < 5
    assert turn.stop_reason == "cancelled"
    assert runtime.store.messages(session_id)[-1].message.role == "assistant"
    with pytest.raises(PoolClosed):
        pool.start(session_id, "again")


def test_a_turn_that_breaks_midway_still_ends_with_error_and_done():
    def run_turn(session_id, text, *, turn_id, cancel):
        yield TurnStart(session_id=session_id, user_message_id=1)
        yield TextDelta("half")
        raise RuntimeError("a bug")

    pool = TurnPool(run_turn)
    turn = pool.start(7, "hi")
    events = read_all(turn)
    assert [e["type"] for e in events] == ["turn_start", "text", "error", "done"]
    assert events[-1]["stop_reason"] == "error"
    assert "a bug" not in events[2]["message"]  # internals stay in the log
    assert pool.running(7) is None


def test_the_session_is_free_at_done_while_the_curator_still_runs():
    curator_may_finish = threading.Event()

    def run_turn(session_id, text, *, turn_id, cancel):
        yield TurnStart(session_id=session_id, user_message_id=1)
        yield Done(stop_reason="end_turn", assistant_message_id=2)
        curator_may_finish.wait(5)

    pool = TurnPool(run_turn)
    turn = pool.start(7, "hi")
    reader = turn.read(0)
    seen = b""
    while b'"done"' not in seen:
        seen += next(reader)
    assert pool.running(7) is None and turn.status == "answered"
    second = pool.start(7, "next")  # not busy: the first turn has answered
    curator_may_finish.set()
    assert list(reader) == []  # the first stream ends when its turn's generator does
    assert turn.status == "finished"
    second.thread.join(5)


def test_the_stream_and_replay_settings_come_from_the_environment():
    from hermes.config import Config
    from hermes.errors import ConfigError

    config = Config.from_env(
        {
            "HERMES_WEB_HEARTBEAT_SECONDS": "0.5",
            "HERMES_WEB_STREAM_MAX_SECONDS": "60",
            "HERMES_WEB_REPLAY_SECONDS": "30",
            "HERMES_WEB_REPLAY_TURNS": "7",
        }
    )
    assert config.web_heartbeat_seconds == 0.5
    assert config.web_stream_max_seconds == 60
    assert (config.web_replay_seconds, config.web_replay_turns) == (30, 7)
    defaults = Config.from_env({})
    assert defaults.web_heartbeat_seconds == 15 and defaults.web_stream_max_seconds < 14 * 60
    for name, bad in [("HERMES_WEB_HEARTBEAT_SECONDS", "0"), ("HERMES_WEB_REPLAY_TURNS", "-1")]:
        with pytest.raises(ConfigError, match=name):
            Config.from_env({name: bad})


def test_a_failure_after_done_leaves_the_answer_standing():
    def run_turn(session_id, text, *, turn_id, cancel):
        yield TurnStart(session_id=session_id, user_message_id=1)
        yield Done(stop_reason="end_turn", assistant_message_id=2)
        raise RuntimeError("the curator broke")

    turn = TurnPool(run_turn).start(7, "hi")
    events = read_all(turn)
    assert [e["type"] for e in events] == ["turn_start", "done"]
    assert turn.stop_reason == "end_turn" and turn.finished


def test_a_reader_behind_gets_every_waiting_line_in_one_write_and_a_lone_event_at_once():
    """Coalescing never reorders and never waits: lines already there go out as one
    chunk in seq order; a line published while the reader waits goes out by itself."""
    turn = pool_module.LiveTurn("t" * 32, 1, clock=time.monotonic)
    for word in ("one ", "two ", "three "):
        turn.publish(TextDelta(word))
    reader = turn.read(0, heartbeat=60)
    first = next(reader)
    assert [json.loads(line)["seq"] for line in first.splitlines()] == [1, 2, 3]

    got = []
    waiting = threading.Thread(target=lambda: got.append(next(reader)))
    waiting.start()
    time.sleep(0.2)  # the reader is waiting on the buffer now
    published = time.monotonic()
    turn.publish(TextDelta("four"))
    waiting.join(10)
    assert time.monotonic() - published < 5  # woken by the publish, not by the 60 s heartbeat
    assert [json.loads(line) for line in got[0].splitlines()] == [
        {"seq": 4, "turn_id": "t" * 32, "type": "text", "delta": "four"}
    ]
    turn.publish(Done(stop_reason="end_turn"))
    turn.finish()
    assert [json.loads(line)["type"] for line in b"".join(reader).splitlines()] == ["done"]
