"""The store against the file system and the terminal: export targets, backups
into unwritable places, and hostile text on its way to a terminal."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes.cli.memory_cmds import db, search
from hermes.cli.memory_cmds import export as export_command
from hermes.errors import StoreError
from hermes.messages import Message
from hermes.store import Store, migrate
from hermes.store.exports import export_text, write_export
from hermes.store.search import MARK_END, MARK_START


def test_export_creates_missing_folders(store, tmp_path):
    session = store.create_session(title="t")
    store.add_message(session.id, Message("user", "hello"))
    target = tmp_path / "not" / "there" / "export.json"
    result = write_export(store, target, "json")
    assert result.sessions == 1 and json.loads(target.read_text())[0]["title"] == "t"
    assert list(target.parent.iterdir()) == [target]


def test_export_into_an_impossible_place_is_a_store_error(store, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="Could not write"):
        write_export(store, blocker / "export.json", "json")


def test_markdown_heading_stays_one_line(store):
    session = store.create_session(title="Deploy\n# not a heading\n\nreally")
    text = export_text(store, "markdown", session.id)
    assert text.splitlines()[0] == "# Deploy # not a heading really"


def test_snippet_markers_always_pair_up(store):
    session = store.create_session(title="quotes")
    store.add_message(
        session.id, Message("user", "he said «nginx» and » then « and \ue000 nginx \ue001 too")
    )
    [hit] = store.search("nginx")
    snippet = hit.snippet
    assert snippet.count(MARK_START) == snippet.count(MARK_END) == 2
    assert "‹" in snippet and "›" in snippet and "\ue000" not in snippet
    pieces = snippet.replace(MARK_END, MARK_START).split(MARK_START)
    assert [piece for n, piece in enumerate(pieces) if n % 2] == ["nginx", "nginx"]


def test_cli_search_keeps_terminal_escapes_out(config, monkeypatch):
    with Store.open(config) as store:
        session = store.create_session(title="\x1b]0;pwned\x07Evil title")
        store.add_message(session.id, Message("user", "nginx \x1b[31mred\x1b[0m config"))
    monkeypatch.setenv("HERMES_HOME", str(config.home))
    monkeypatch.setenv("HERMES_DATABASE_URL", config.database_url)
    result = CliRunner().invoke(search, ["nginx"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "Evil title" in result.output and "red" in result.output
    long_query = "zzzz " * 2000
    missing = CliRunner().invoke(search, [long_query])
    assert missing.exit_code == 0 and len(missing.output) < 200


def test_backup_into_an_unwritable_place_is_a_store_error(config, monkeypatch):
    with Store.open(config) as store:
        store.create_session(title="keep me")
    config.backups_dir.parent.mkdir(parents=True, exist_ok=True)
    config.backups_dir.write_text("a file where the backups folder should be")
    with Store.open(config) as store, pytest.raises(StoreError, match="Backup of .* failed"):
        migrate.backup_database(store.engine, config.backups_dir)
    monkeypatch.setenv("HERMES_HOME", str(config.home))
    monkeypatch.setenv("HERMES_DATABASE_URL", config.database_url)
    result = CliRunner().invoke(db, ["backup"])
    assert isinstance(result.exception, StoreError)


def test_home_that_cannot_be_created_is_a_store_error(make_config, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    home = blocker / "home"
    config = make_config(home=home, database_url=f"sqlite:///{home / 'hermes.db'}")
    with pytest.raises(StoreError, match="Cannot create the folder"):
        Store.open(config)


def test_cli_export_to_stdout_and_missing_session(config, monkeypatch):
    with Store.open(config) as store:
        session = store.create_session(title="out")
        store.add_message(session.id, Message("user", 'a "quoted" </script> line'))
    monkeypatch.setenv("HERMES_HOME", str(config.home))
    monkeypatch.setenv("HERMES_DATABASE_URL", config.database_url)
    result = CliRunner().invoke(export_command, [])
    assert result.exit_code == 0
    [exported] = json.loads(result.output)
    assert exported["messages"][0]["content"] == 'a "quoted" </script> line'


def test_unknown_newer_revision_without_upgrade_says_upgrade_hermes(config):
    import sqlite3

    Store.open(config).close()
    with sqlite3.connect(config.home / "hermes.db") as raw:
        raw.execute("UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(StoreError, match="newer Hermes") as caught:
        Store.open(config, upgrade=False)
    assert "hermes db upgrade" not in caught.value.message


@pytest.mark.parametrize("url", ["sqlite://h:notaport/x", "postgresql://u@h:nope/db"])
def test_an_unparseable_database_url_is_a_config_error(url):
    from hermes.errors import ConfigError
    from hermes.store.engine import sqlite_path

    with pytest.raises(ConfigError, match="HERMES_DATABASE_URL"):
        sqlite_path(url)
