"""Daily backups for a long-running server, and finding the newest copy.

The copy is SQLite's online backup (:func:`hermes.store.migrate.backup_database`):
the database is in WAL mode, so the backup reads one consistent snapshot while
the dashboard keeps writing; nobody waits for it. A backup is taken when the
newest daily copy is older than a day, and copies older than
``HERMES_BACKUP_DAYS`` days are deleted (the newest one is always kept).

:class:`DailyBackups` runs that check on a daemon thread once an hour, so a
server that runs for weeks keeps a week of copies without a cron job.
"""

from __future__ import annotations

import logging
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine

from hermes.errors import HermesError
from hermes.store import migrate

log = logging.getLogger(__name__)

DAILY_PREFIX = "daily-"
CHECK_EVERY_SECONDS = 3600
_STAMP = re.compile(r"(\d{8}-\d{6})")


def backup_time(path: Path) -> datetime | None:
    """When a backup was taken, from its name (``<prefix>YYYYmmdd-HHMMSS-...``)."""
    match = _STAMP.search(path.name)
    if not match:
        return None
    try:
        return datetime.strptime(match.group(1), "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def backups(backups_dir: Path, prefix: str = "") -> list[Path]:
    """Every finished backup (``*.db``) in the folder, oldest first."""
    if not backups_dir.is_dir():
        return []
    found = [p for p in backups_dir.glob(f"{prefix}*.db") if backup_time(p) is not None]
    return sorted(found, key=lambda p: (backup_time(p), p.name))


def newest_backup(backups_dir: Path) -> Path | None:
    every = backups(backups_dir)
    return every[-1] if every else None


def take_daily_backup(
    engine: Engine, backups_dir: Path, *, keep_days: int, now: datetime | None = None
) -> Path | None:
    """Back up when the newest daily copy is a day old (or missing); prune old ones.

    Returns the new backup's path, or None when none was due (or backups are off).
    """
    if keep_days <= 0:
        return None
    now = now or datetime.now(UTC)
    daily = backups(backups_dir, DAILY_PREFIX)
    made = None
    if not daily or now - backup_time(daily[-1]) >= timedelta(days=1):
        made = migrate.backup_database(engine, backups_dir, prefix=DAILY_PREFIX)
        daily = backups(backups_dir, DAILY_PREFIX)
    cutoff = now - timedelta(days=keep_days)
    for path in daily[:-1]:  # the newest copy stays, however old
        if backup_time(path) < cutoff:
            path.unlink(missing_ok=True)
    return made


class DailyBackups:
    """A daemon thread that calls :func:`take_daily_backup` shortly after start, then hourly.

    The first check waits ``start_delay`` seconds, so a server that is started
    and stopped at once (a failed deploy, a test) copies nothing.
    """

    def __init__(
        self, engine: Engine, backups_dir: Path, *, keep_days: int, start_delay: float = 30.0
    ):
        self.engine = engine
        self.backups_dir = backups_dir
        self.keep_days = keep_days
        self.start_delay = start_delay
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> DailyBackups:
        if self.keep_days > 0 and self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="hermes-daily-backup", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        if self._stop.wait(self.start_delay):
            return
        while not self._stop.is_set():
            try:
                made = take_daily_backup(self.engine, self.backups_dir, keep_days=self.keep_days)
                if made:
                    log.info("daily backup written to %s", made)
            except HermesError as exc:
                log.warning("daily backup failed: %s", exc.message)
            except Exception:  # a failed backup must never take the server down
                log.exception("daily backup failed")
            self._stop.wait(CHECK_EVERY_SECONDS)
