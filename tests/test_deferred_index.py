"""Bulk writes index once per batch (store/deferred_index.py, migration 0009):
the indexes they leave are exactly what the one-message-at-a-time triggers write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from hermes.messages import Message
from hermes.store import Store, deferred_index, migrate
from hermes.store.bulk import SessionRecord
from hermes.store.engine import make_engine, write_transaction

WHEN = datetime(2024, 5, 2, 10, 0, tzinfo=UTC)
CONVERSATIONS = [
    (
        "Lisbon trip",
        [
            ("user", "Book a hotel near the river for the Lisbon trip"),
            ("assistant", "Found three hotels close to the Tagus, 日本語 too 🎉"),
            ("tool", "search results: hotel one, hotel two"),
            ("assistant", "The second one has a rooftop"),
        ],
    ),
    ("Garden", [("user", "My tomatoes have blight"), ("assistant", "Remove the lower leaves")]),
    (None, [("user", "a single message session")]),
]


def _add_one_by_one(store: Store) -> None:
    for title, messages in CONVERSATIONS:
        session = store.create_session(title=title)
        for role, content in messages:
            extra = {"tool_call_id": "c1", "tool_name": "run_bash"} if role == "tool" else {}
            store.add_message(session.id, Message(role, content, **extra))


def _records(messages_of=lambda messages: messages) -> list[SessionRecord]:
    return [
        SessionRecord(
            title=title,
            created_at=WHEN,
            updated_at=WHEN,
            uid=f"uid{n}",
            messages=[
                (
                    Message(
                        role,
                        content,
                        **(
                            {"tool_call_id": "c1", "tool_name": "run_bash"}
                            if role == "tool"
                            else {}
                        ),
                    ),
                    WHEN + timedelta(minutes=i),
                )
                for i, (role, content) in enumerate(messages_of(messages))
            ],
        )
        for n, (title, messages) in enumerate(CONVERSATIONS)
    ]


def _index(store: Store) -> dict:
    """Everything both indexes hold, after their integrity checks pass."""
    with write_transaction(store.engine) as connection:
        for table in ("messages_fts", "messages_context_fts"):
            connection.execute(text(f"INSERT INTO {table}({table}) VALUES ('integrity-check')"))
        context = [
            (row.rowid, row.context.split(), row.literal)
            for row in connection.execute(
                text("SELECT rowid, context, literal FROM messages_context_fts ORDER BY rowid")
            )
        ]
        words = {
            word: connection.execute(
                text("SELECT rowid FROM messages_fts WHERE messages_fts MATCH :w ORDER BY rowid"),
                {"w": word},
            )
            .scalars()
            .all()
            for word in ("hotel", "blight", "rooftop", "search", "single", "tagus")
        }
    return {"context": context, "words": words}


MONTHS = {datetime(2024, n, 1).strftime("%B").lower() for n in range(1, 13)}


def _dates_out(index: dict) -> dict:
    """The index without its month and year words (the two paths store other dates)."""
    for _, words, _ in index["context"]:
        words[:] = [w for w in words if w not in MONTHS and not w.isdigit()]
    return index


def test_bulk_import_indexes_what_the_triggers_index(make_config, tmp_path):
    one = make_config(database_url=f"sqlite:///{tmp_path / 'one.db'}")
    bulk = make_config(database_url=f"sqlite:///{tmp_path / 'bulk.db'}")
    with Store.open(one) as store:
        _add_one_by_one(store)
        expected = _dates_out(_index(store))
    with Store.open(bulk) as store:
        store.add_session_records(_records())
        assert _dates_out(_index(store)) == expected
        assert expected["context"], "the context index is not empty"
        assert store.search("rooftop")[0].snippet == "The second one has a «rooftop»"
        assert store.search("勉強 日本")  # CJK through the literal column, written in bulk


def _context_of(store: Store, content: str) -> str:
    with store.engine.connect() as connection:
        return connection.execute(
            text(
                "SELECT c.context FROM messages_context_fts c JOIN messages m ON m.id = c.rowid "
                "WHERE m.content = :content"
            ),
            {"content": content},
        ).scalar()


def test_extending_by_import_reindexes_the_message_before_the_new_ones(store):
    store.add_session_records(_records(lambda messages: messages[:1]))
    assert "lower leaves" not in _context_of(store, "My tomatoes have blight")
    outcomes = store.merge_session_records(_records())
    assert [o.action for o in outcomes] == ["extended", "extended", "skipped"]
    # The stored message's next neighbour arrived in the import: its context has it now.
    assert "Remove the lower leaves" in _context_of(store, "My tomatoes have blight")
    assert "My tomatoes" in _context_of(store, "Remove the lower leaves")
    _index(store)  # both integrity checks pass
    assert store.search("rooftop")


def test_a_failed_bulk_write_leaves_the_triggers_on_and_nothing_half_indexed(store):
    class Boom(Exception):
        pass

    with (
        pytest.raises(Boom),
        write_transaction(store.engine) as connection,
        deferred_index.deferred(connection),
    ):
        store_session = connection.execute(
            text(
                "INSERT INTO sessions(uid, source, created_at, updated_at, message_count) "
                "VALUES ('u', 'cli', '2024-01-01', '2024-01-01', 0) RETURNING id"
            )
        ).scalar()
        connection.execute(
            text(
                "INSERT INTO messages(session_id, position, role, content, is_error, "
                "created_at) VALUES (:s, 0, 'user', 'vanishing words', 0, '2024-01-01')"
            ),
            {"s": store_session},
        )
        raise Boom
    assert deferred_index.live() == 1
    assert store.search("vanishing") == []
    session = store.create_session()
    stored = store.add_message(session.id, Message("user", "vanishing words after all"))
    assert [h.message_id for h in store.search("vanishing")] == [stored.id]


def test_a_filled_0008_database_upgrades_through_0009(config):
    config.home.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database_url)
    try:
        migrate.stamp_revision(engine, "0008")
        with write_transaction(engine) as connection:
            for n in range(30):
                connection.execute(
                    text(
                        "INSERT INTO sessions(id, uid, title, source, created_at, updated_at, "
                        "message_count) VALUES (:n, :u, :t, 'cli', '2024-05-02', '2024-05-02', 2)"
                    ),
                    {"n": n + 1, "u": f"u{n}", "t": f"Session {n}"},
                )
                for position, content in enumerate([f"question {n} about kayaks", "an answer"]):
                    # One transaction per message, as 0008 wrote them: many small segments.
                    connection.execute(
                        text(
                            "INSERT INTO messages(session_id, position, role, content, is_error, "
                            "created_at) VALUES (:s, :p, 'user', :c, 0, '2024-05-02 10:00:00')"
                        ),
                        {"s": n + 1, "p": position, "c": content},
                    )
    finally:
        engine.dispose()
    with Store.open(config) as store:
        with store.engine.connect() as connection:
            triggers = dict(
                connection.execute(
                    text("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
                ).all()
            )
            assert migrate.current_revision(connection) == "0009"
        for name in ("messages_ai", "messages_context_ai"):
            assert "WHEN hermes_index_live()" in triggers[name]
        hits = store.search("kayaks", limit=100)
        assert sum("«kayaks»" in h.snippet for h in hits) == 30
        # The answers are found through their neighbour, as before the upgrade.
        assert sum(h.snippet == "an answer" for h in hits) == 30
        # New messages, one at a time and in bulk, are indexed after the upgrade.
        session = store.create_session(title="after")
        live = store.add_message(session.id, Message("user", "canoes now"))
        store.add_session_records(_records())
        assert [h.message_id for h in store.search("canoes")] == [live.id]
        assert store.search("blight")
        _index(store)  # both integrity checks pass
