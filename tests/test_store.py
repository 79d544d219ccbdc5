"""The memory store on a real SQLite file: sessions, messages, turns, paging."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from hermes.errors import ConfigError, Conflict, InvalidInput, NotFound, StoreError
from hermes.events import ToolCall, Usage
from hermes.messages import Message
from hermes.store import Store


def test_pragmas_on_every_connection(store):
    with store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() >= 5000
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL


def test_session_lifecycle(store):
    created = store.create_session(title="First", source="web", model="m1")
    assert created.message_count == 0 and created.source == "web"
    assert store.get_session(created.id) == created
    updated = store.update_session(
        created.id, title="Renamed", summary="I helped.", system_prompt="SYS"
    )
    assert (updated.title, updated.summary, updated.system_prompt, updated.model) == (
        "Renamed",
        "I helped.",
        "SYS",
        "m1",
    )
    data = updated.to_dict()
    assert {"id", "title", "source", "created_at", "updated_at", "message_count", "summary"} <= set(
        data
    )
    assert data["created_at"].endswith("Z")
    store.delete_session(created.id)
    with pytest.raises(NotFound):
        store.get_session(created.id)
    with pytest.raises(NotFound):
        store.delete_session(created.id)
    with pytest.raises(NotFound):
        store.update_session(created.id, title="x")


def test_history_round_trips_every_field(store):
    session = store.create_session()
    sent = [
        Message("user", "Run the tests please", context="<skills>pytest-helper</skills>"),
        Message(
            "assistant",
            "Running them.",
            tool_calls=(
                ToolCall("call_1", "run_bash", {"command": "pytest -q", "nested": {"a": [1, 2]}}),
                ToolCall("call_2", "read_file", {}),
            ),
        ),
        Message("tool", "1 failed", tool_call_id="call_1", tool_name="run_bash", is_error=True),
        Message("tool", "contents", tool_call_id="call_2", tool_name="read_file"),
        Message("assistant", "One test fails. ünïcödé ✓"),
    ]
    stored = [store.add_message(session.id, m, turn_id="t1") for m in sent]
    assert [s.id for s in stored] == sorted(s.id for s in stored)
    assert store.history(session.id) == sent
    api = store.messages(session.id)[1].to_dict()
    assert api["tool_calls"][0] == {
        "id": "call_1",
        "name": "run_bash",
        "input": {"command": "pytest -q", "nested": {"a": [1, 2]}},
    }
    assert "context" not in api
    assert store.get_session(session.id).message_count == 5
    page = store.messages(session.id, after_id=stored[1].id, limit=2)
    assert [m.id for m in page] == [stored[2].id, stored[3].id]


def test_add_message_checks_session_and_role(store):
    with pytest.raises(NotFound):
        store.add_message(999, Message("user", "hi"))
    session = store.create_session()
    with pytest.raises(InvalidInput):
        store.add_message(session.id, Message("system", "hi"))  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        store.messages(999)


def test_usage_accumulates(store):
    session = store.create_session()
    store.add_usage(session.id, Usage(input_tokens=100, output_tokens=20, cost_usd=0.01))
    store.add_usage(session.id, Usage(input_tokens=50, output_tokens=5, cost_usd=None))
    info = store.get_session(session.id)
    assert (info.input_tokens, info.output_tokens) == (150, 25)
    assert info.cost_usd == pytest.approx(0.01)


def test_list_sessions_pages_newest_updated_first(store):
    ids = [store.create_session(title=f"s{n}").id for n in range(7)]
    store.add_message(ids[2], Message("user", "bump"))  # now the most recently updated
    seen = []
    page, cursor = store.list_sessions(limit=3)
    seen += [s.id for s in page]
    while cursor:
        page, cursor = store.list_sessions(limit=3, before=cursor)
        seen += [s.id for s in page]
    assert seen[0] == ids[2]
    assert sorted(seen) == sorted(ids) and len(seen) == 7
    assert store.latest_session().id == ids[2]


@pytest.mark.parametrize("cursor", ["garbage", "!!!", "MjAyNHx4", ""])
def test_bad_cursor_is_invalid_input(store, cursor):
    store.create_session()
    if cursor == "":
        assert store.list_sessions(before=cursor)[0]
        return
    with pytest.raises(InvalidInput):
        store.list_sessions(before=cursor)


def test_turns_one_running_per_session(store):
    session = store.create_session()
    other = store.create_session()
    store.start_turn(session.id, "turn-1")
    assert store.running_turn(session.id) == "turn-1"
    with pytest.raises(Conflict):
        store.start_turn(session.id, "turn-2")
    store.start_turn(other.id, "turn-3")  # other sessions are free
    store.finish_turn("turn-1", "end_turn")
    assert store.running_turn(session.id) is None
    store.start_turn(session.id, "turn-4")
    with pytest.raises(NotFound):
        store.finish_turn("nope", "end_turn")
    with pytest.raises(NotFound):
        store.start_turn(12345, "turn-5")


def test_threads_share_one_store(store):
    session = store.create_session()
    errors = []

    def writer(n):
        try:
            for i in range(25):
                store.add_message(session.id, Message("user", f"thread {n} message {i}"))
                store.search(f"thread {n}")
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    messages = store.messages(session.id)
    assert len(messages) == 150 == store.get_session(session.id).message_count


def test_non_sqlite_url_is_refused(make_config):
    with pytest.raises(ConfigError, match="SQLite"):
        Store.open(make_config(database_url="postgresql://localhost/hermes"))


def test_open_without_upgrade_refuses_empty_database(config):
    with pytest.raises(StoreError, match="hermes db upgrade"):
        Store.open(config, upgrade=False)


def test_open_twice_is_fine(config):
    Store.open(config).close()
    with Store.open(config, upgrade=False) as again:
        assert again.list_sessions() == ([], None)


def test_corrupt_database_is_a_store_error(config):
    (config.home / "hermes.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a database"):
        Store.open(config)
