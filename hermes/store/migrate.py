"""Schema upgrades (Alembic, configured in code) and database backups.

The Alembic scripts live in the top-level ``migrations/`` folder. It is found
next to the ``hermes`` package (a source checkout or an editable install) or,
for a regular install, inside it as ``hermes/_migrations`` (package data).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, Engine, inspect, text

from hermes.errors import StoreError
from hermes.privacy import create_private_file, private_folder
from hermes.store.engine import sqlite_path, write_transaction

PRE_UPGRADE_PREFIX = "pre-upgrade-"
# FTS5 tables (and their shadow tables), the view feeding them and their
# triggers are raw SQL in a revision; autogenerate must not try to drop them.
SEARCH_OBJECT_PREFIXES = (
    "messages_fts",
    "sessions_fts",
    "messages_search_source",
    "messages_context",
)
KEEP_PRE_UPGRADE_BACKUPS = 5


def include_object(obj, name, type_, reflected, compare_to) -> bool:
    """Alembic autogenerate filter: leave the search objects alone."""
    return not (name or "").startswith(SEARCH_OBJECT_PREFIXES)


def migrations_dir() -> Path:
    """The folder holding ``env.py`` and ``versions/``."""
    import hermes

    package = Path(hermes.__file__).resolve().parent
    for candidate in (package.parent / "migrations", package / "_migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise StoreError(
        "Cannot find the database migrations (migrations/env.py); reinstall hermes-agent "
        "(pip install -e . from the source checkout)."
    )


def alembic_config(connection: Connection | None = None, url: str | None = None):
    """An Alembic Config built in code, so no alembic.ini is needed."""
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(migrations_dir()))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(connection: Connection) -> str | None:
    """The database's Alembic revision; None for an empty database.

    Raises StoreError for a database with tables but no revision (not ours).
    """
    from alembic.runtime.migration import MigrationContext

    revision = MigrationContext.configure(connection).get_current_revision()
    if revision is None:
        tables = set(inspect(connection).get_table_names())
        if tables:
            raise StoreError(
                "The database has tables but no schema revision, so it was not created by "
                "Hermes; point HERMES_DATABASE_URL at a new file."
            )
    return revision


def known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    return {rev.revision for rev in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def unknown_revision(current: str) -> StoreError:
    return StoreError(
        f"The database is at schema revision {current}, which this version of "
        "Hermes does not know (it was written by a newer Hermes); upgrade Hermes."
    )


@dataclass(frozen=True)
class UpgradeResult:
    from_revision: str | None
    to_revision: str
    backup: Path | None


def upgrade(engine: Engine, backups_dir: Path) -> UpgradeResult:
    """Bring the database to the head revision, backing it up first if it held data.

    Runs under BEGIN IMMEDIATE, so two processes starting at once upgrade once.
    """
    from alembic import command
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    head = script.get_current_head()
    known = known_revisions()
    with engine.connect() as connection:
        dbapi = connection.connection.driver_connection
        # The SQLite way to change a schema: foreign keys off (only possible
        # outside a transaction), check them before committing. Without it a
        # table rebuild (batch_alter_table) would cascade-delete child rows.
        dbapi.execute("PRAGMA foreign_keys = OFF")
        try:
            connection.execution_options(hermes_write=True)
            with connection.begin():
                current = current_revision(connection)
                if current == head:
                    return UpgradeResult(current, head, None)
                if current is not None and current not in known:
                    raise unknown_revision(current)
                backup = None
                if current is not None:
                    backup = backup_database(engine, backups_dir, prefix=PRE_UPGRADE_PREFIX)
                    prune_backups(backups_dir, PRE_UPGRADE_PREFIX, KEEP_PRE_UPGRADE_BACKUPS)
                command.upgrade(alembic_config(connection), "head")
                problems = connection.execute(text("PRAGMA foreign_key_check")).fetchall()
                if problems:
                    raise StoreError(
                        f"Upgrade aborted: {len(problems)} rows would break foreign keys; "
                        f"the database is unchanged (backup: {backup})."
                    )
        finally:
            dbapi.execute("PRAGMA foreign_keys = ON")
    return UpgradeResult(current, head, backup)


def stamp_revision(engine: Engine, revision: str) -> None:
    """Upgrade an empty or older database to exactly ``revision`` (tests, benches)."""
    from alembic import command

    with write_transaction(engine) as connection:
        command.upgrade(alembic_config(connection), revision)


def backup_database(engine: Engine, backups_dir: Path, *, prefix: str = "hermes-") -> Path:
    """Copy the live database into ``backups_dir`` with SQLite's online backup API.

    Safe while other connections (the CLI, the web server) are writing: the
    copy is one consistent snapshot. Returns the new file's path.
    """
    source_path = sqlite_path(str(engine.url))
    if not source_path.exists():
        raise StoreError(f"There is no database at {source_path} to back up yet.")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
    target = backups_dir / f"{prefix}{stamp}.db"
    partial = target.with_suffix(".db.partial")
    try:
        private_folder(backups_dir)
        clear_stale_partials(backups_dir)
        create_private_file(partial)  # SQLite keeps the mode of a file that exists
        source = sqlite3.connect(str(source_path), timeout=30)
        try:
            destination = sqlite3.connect(str(partial))
            try:
                source.backup(destination)
            finally:
                destination.close()
        finally:
            source.close()
        partial.replace(target)
    except (sqlite3.Error, OSError) as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise StoreError(
            f"Backup of {source_path} into {backups_dir} failed: {reason}. Check that the "
            "folder is writable and the disk has space."
        ) from exc
    return target


# A copy in progress writes its file all along; one untouched this long was left by a
# process killed mid-copy (a deploy, the out-of-memory killer) and is never finished.
STALE_PARTIAL_SECONDS = 15 * 60


def clear_stale_partials(backups_dir: Path) -> list[Path]:
    """Remove unfinished copies (``*.db.partial`` and SQLite's ``-journal`` beside them)
    that nothing has written for STALE_PARTIAL_SECONDS; the paths removed."""
    cutoff = time.time() - STALE_PARTIAL_SECONDS
    removed = []
    for path in sorted(backups_dir.glob("*.db.partial*")):
        with contextlib.suppress(OSError):
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed.append(path)
    return removed


def prune_backups(backups_dir: Path, prefix: str, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` backups named ``prefix*.db``; return the deleted."""
    backups = sorted(backups_dir.glob(f"{prefix}*.db"), key=lambda p: p.name)
    doomed = backups[:-keep] if keep > 0 else backups
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed
