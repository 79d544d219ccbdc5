"""Alembic upgrades: an old database with data in it comes through intact."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import text

from hermes.errors import StoreError
from hermes.messages import Message
from hermes.store import Store, migrate
from hermes.store.engine import make_engine, write_transaction


def _database_at_first_revision(config) -> None:
    """A database as Hermes 0001 left it, with two sessions and some messages."""
    config.home.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database_url)
    try:
        migrate.stamp_revision(engine, "0001")
        with write_transaction(engine) as connection:
            connection.execute(
                text(
                    "INSERT INTO sessions (id, title, source, created_at, updated_at, message_count, summary) "
                    "VALUES (1, 'Old chat', 'cli', '2024-01-01 10:00:00.000000', "
                    "'2024-01-01 10:05:00.000000', 2, 'I set up the kubernetes cluster.'), "
                    "(2, NULL, 'web', '2024-02-01 10:00:00.000000', '2024-02-01 10:00:00.000000', 1, NULL)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO messages (session_id, position, role, content, tool_calls, created_at) VALUES "
                    "(1, 0, 'user', 'How do I configure the ingress controller?', NULL, '2024-01-01 10:00:00.000000'), "
                    "(1, 1, 'assistant', 'Install ingress-nginx with helm.', "
                    '\'[{"id":"c1","name":"run_bash","input":{"command":"helm list"}}]\', '
                    "'2024-01-01 10:05:00.000000'), "
                    "(2, 0, 'user', 'Remember my favourite colour is teal', NULL, '2024-02-01 10:00:00.000000')"
                )
            )
    finally:
        engine.dispose()


def test_upgrade_from_first_revision_keeps_everything(config):
    _database_at_first_revision(config)
    with Store.open(config) as store:
        sessions, _ = store.list_sessions()
        assert [s.id for s in sessions] == [2, 1]
        old = store.get_session(1)
        assert old.title == "Old chat" and old.message_count == 2
        assert len(old.uid) == 32 and old.uid != store.get_session(2).uid
        history = store.history(1)
        assert history[0].content == "How do I configure the ingress controller?"
        assert history[1].tool_calls[0].input == {"command": "helm list"}
        # The search index was built from the old rows.
        assert store.search("ingress controller")[0].message_id is not None
        assert store.search("teal colour")[0].session_id == 2
        assert store.search("kubernetes cluster")[0].role == "summary"
        # New writes work on the upgraded schema.
        store.add_message(1, Message("user", "thanks"))
        assert store.get_session(1).message_count == 3
    backups = list((config.home / "backups").glob("pre-upgrade-*.db"))
    assert len(backups) == 1
    with sqlite3.connect(backups[0]) as copy:
        assert copy.execute("SELECT version_num FROM alembic_version").fetchone() == ("0001",)
        assert copy.execute("SELECT count(*) FROM messages").fetchone() == (3,)


def test_new_database_is_created_at_head_without_backup(config):
    with Store.open(config) as store, store.engine.connect() as connection:
        version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert version == migrate.head_revision()
    assert not (config.home / "backups").exists()


def test_outdated_database_without_upgrade_is_refused(config):
    _database_at_first_revision(config)
    with pytest.raises(StoreError, match="hermes db upgrade"):
        Store.open(config, upgrade=False)


def test_unknown_newer_revision_is_refused(config):
    Store.open(config).close()
    with sqlite3.connect(config.home / "hermes.db") as raw:
        raw.execute("UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(StoreError, match="newer Hermes"):
        Store.open(config)


def test_foreign_database_is_refused(config):
    with sqlite3.connect(config.home / "hermes.db") as raw:
        raw.execute("CREATE TABLE something (x)")
    with pytest.raises(StoreError, match="not created by Hermes"):
        Store.open(config)


def test_only_the_last_five_upgrade_backups_are_kept(config):
    backups = config.home / "backups"
    backups.mkdir()
    for n in range(7):
        (backups / f"pre-upgrade-2024010{n}-000000-000000.db").write_bytes(b"x")
    (backups / "hermes-manual.db").write_bytes(b"x")
    _database_at_first_revision(config)
    Store.open(config).close()
    kept = sorted(p.name for p in backups.glob("pre-upgrade-*.db"))
    assert len(kept) == 5
    assert "pre-upgrade-20240100-000000-000000.db" not in kept
    assert (backups / "hermes-manual.db").exists()  # manual backups are never pruned


def test_downgrade_and_upgrade_again(config):
    from alembic import command

    Store.open(config).close()
    engine = make_engine(config.database_url)
    try:
        with write_transaction(engine) as connection:
            command.downgrade(migrate.alembic_config(connection), "0001")
    finally:
        engine.dispose()
    with Store.open(config) as store:
        session = store.create_session(title="after round trip")
        assert store.search("round trip")[0].session_id == session.id


def test_models_match_migrations(config):
    """Autogenerate finds nothing to do: models and revisions describe one schema."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from hermes.store.models import Base

    with Store.open(config) as store, store.engine.connect() as connection:
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "hermes_env_probe", migrate.migrations_dir() / "env.py"
        )
        source = spec.loader.get_source("hermes_env_probe")
        namespace: dict = {}
        # Only the filter is needed; env.py's main() needs an Alembic context.
        exec(compile(source.split("def run_migrations")[0], "env.py", "exec"), namespace)
        context = MigrationContext.configure(
            connection, opts={"include_object": namespace["include_object"], "compare_type": False}
        )
        assert compare_metadata(context, Base.metadata) == []


def test_upgrade_through_0004_closes_ownerless_turns_and_keeps_messages(config):
    """A 0003 database with a turn left running (no owner columns yet) and a broken
    tool exchange: after the upgrade the session is free and its history valid."""
    config.home.mkdir(parents=True, exist_ok=True)
    engine = make_engine(config.database_url)
    try:
        migrate.stamp_revision(engine, "0003")
        with write_transaction(engine) as connection:
            connection.execute(
                text(
                    "INSERT INTO sessions (id, uid, title, source, created_at, updated_at, "
                    "message_count) VALUES (1, 'u1', 'Old', 'cli', '2025-01-01 10:00:00.000000', "
                    "'2025-01-01 10:00:00.000000', 2)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO messages (session_id, position, role, content, tool_calls, "
                    "turn_id, created_at) VALUES "
                    "(1, 0, 'user', 'list the files', NULL, 't1', '2025-01-01 10:00:00.000000'), "
                    "(1, 1, 'assistant', '', "
                    '\'[{"id":"c1","name":"list_dir","input":{}}]\', '
                    "'t1', '2025-01-01 10:00:01.000000')"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO turns (id, session_id, status, started_at) "
                    "VALUES ('t1', 1, 'running', '2025-01-01 10:00:00.000000')"
                )
            )
    finally:
        engine.dispose()

    with Store.open(config) as store:
        assert store.running_turn(1) is None
        with store.engine.connect() as connection:
            turn = connection.execute(text("SELECT status, stop_reason FROM turns")).one()
        assert tuple(turn) == ("finished", "interrupted")
        store.start_turn(1, "t2")
        history = store.model_history(1, turn_id="t2")
        assert [m.role for m in history] == ["user", "assistant", "tool"]
        assert history[2].tool_call_id == "c1"
        assert store.history(1)[0].content == "list the files"
        store.count_skill_use("some-skill")
        assert store.skill_use_counts()["some-skill"][0] == 1


def test_upgrade_drops_the_unused_message_token_columns_and_keeps_search(config):
    """0005: messages.input_tokens / output_tokens were never written; they go, the rows stay."""
    _database_at_first_revision(config)
    engine = make_engine(config.database_url)
    try:
        migrate.stamp_revision(engine, "0003")
    finally:
        engine.dispose()
    with sqlite3.connect(config.home / "hermes.db") as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(messages)")}
        assert {"input_tokens", "output_tokens"} <= columns
        ids = [row[0] for row in raw.execute("SELECT id FROM messages ORDER BY id")]
    with Store.open(config) as store:
        assert [m.id for m in store.messages(1)] + [m.id for m in store.messages(2)] == ids
        assert store.search("ingress controller")[0].message_id == ids[0]
        added = store.add_message(2, Message("user", "the upgrade kept search triggers"))
        assert store.search("search triggers")[0].message_id == added.id
    with sqlite3.connect(config.home / "hermes.db") as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(messages)")}
        triggers = {
            row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
        }
    assert not {"input_tokens", "output_tokens"} & columns
    assert {"messages_ai", "messages_ad", "messages_au"} <= triggers
