"""Putting a backup back: ``hermes db restore [FILE]``.

The order matters so that nothing is ever lost: the backup is first copied
beside the database and checked (``PRAGMA integrity_check``, and that it is a
Hermes database); only then is the current database moved aside, with its
``-wal`` and ``-shm`` files (a stale write-ahead log replayed into another
database would damage it), and the checked copy renamed into its place.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hermes.errors import StoreError
from hermes.store.engine import sqlite_path

SIDE_FILES = ("-wal", "-shm")


@dataclass(frozen=True)
class RestoreResult:
    source: Path
    database: Path
    moved_aside: Path | None


def newest_backup(backups_dir: Path) -> Path | None:
    """The most recently written ``*.db`` in ``backups_dir``, or None."""
    if not backups_dir.is_dir():
        return None
    found = [p for p in backups_dir.glob("*.db") if p.is_file()]
    return max(found, key=lambda p: (p.stat().st_mtime_ns, p.name)) if found else None


def check_integrity(path: Path) -> list[str]:
    """Problems SQLite finds in the file (empty when it is sound and a Hermes database)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
            if problems == ["ok"]:
                problems = []
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error as exc:
        return [str(exc)]
    if not problems and "alembic_version" not in tables:
        problems.append("it is not a Hermes database (no alembic_version table)")
    return problems


def restore_database(database_url: str, backups_dir: Path, source: Path | None = None):
    """Replace the database with ``source`` (default: the newest backup); see module docs."""
    database = sqlite_path(database_url)
    if source is None:
        source = newest_backup(backups_dir)
        if source is None:
            raise StoreError(
                f"There is no backup in {backups_dir} to restore; give one with "
                "`hermes db restore FILE`."
            )
    source = Path(source).expanduser()
    if not source.is_file():
        raise StoreError(f"{source} is not a file; give the path of a backup (*.db).")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    staged = database.with_name(f"{database.name}.restoring-{stamp}")
    try:
        database.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, staged)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise StoreError(
            f"Could not copy {source} to {database.parent}: {exc.strerror or exc}."
        ) from None
    problems = check_integrity(staged)
    if problems:
        staged.unlink(missing_ok=True)
        raise StoreError(
            f"{source} failed its integrity check ({'; '.join(problems[:3])}); nothing was "
            f"changed. Pick another backup from {backups_dir} with `hermes db restore FILE`."
        )
    aside = None
    try:
        if database.exists():
            aside = database.with_name(f"{database.name}.broken-{stamp}")
            database.replace(aside)
        for suffix in SIDE_FILES:
            side = database.with_name(database.name + suffix)
            if side.exists():
                # Beside the database moved aside, under the name SQLite looks for.
                keep = aside.name + suffix if aside else f"{side.name}.orphan-{stamp}"
                side.replace(side.with_name(keep))
        staged.replace(database)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise StoreError(f"Could not put the backup in place: {exc.strerror or exc}.") from None
    return RestoreResult(source=source, database=database, moved_aside=aside)
