"""Daily backups: taken when due, consistent while the database is written, pruned by age."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta

from hermes.messages import Message
from hermes.store.backups import (
    DAILY_PREFIX,
    DailyBackups,
    backup_time,
    backups,
    newest_backup,
    take_daily_backup,
)
from hermes.store.store import Store


def fake_backup(folder, when: datetime, prefix=DAILY_PREFIX):
    path = folder / f"{prefix}{when.strftime('%Y%m%d-%H%M%S')}-000000.db"
    path.write_bytes(b"")
    return path


def test_first_backup_is_taken_and_a_second_one_waits_a_day(config):
    store = Store.open(config)
    session = store.create_session()
    store.add_message(session.id, Message(role="user", content="the backup remembers this"))
    made = take_daily_backup(store.engine, config.backups_dir, keep_days=7)
    assert made is not None and made.name.startswith(DAILY_PREFIX)
    copy = sqlite3.connect(made)
    assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert copy.execute("SELECT count(*) FROM messages").fetchone() == (1,)
    copy.close()
    assert take_daily_backup(store.engine, config.backups_dir, keep_days=7) is None
    later = datetime.now(UTC) + timedelta(days=1, minutes=1)
    assert take_daily_backup(store.engine, config.backups_dir, keep_days=7, now=later) is not None
    store.close()


def test_old_daily_backups_are_pruned_but_the_newest_always_stays(config):
    store = Store.open(config)
    folder = config.backups_dir
    folder.mkdir(exist_ok=True)
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    old = [fake_backup(folder, now - timedelta(days=d)) for d in (30, 10, 8)]
    recent = fake_backup(folder, now - timedelta(hours=3))
    upgrade_copy = fake_backup(folder, now - timedelta(days=40), prefix="pre-upgrade-")
    assert take_daily_backup(store.engine, folder, keep_days=7, now=now) is None  # not due
    assert not any(p.exists() for p in old)
    assert recent.exists() and upgrade_copy.exists()  # other kinds of backup are left alone
    # Only copies older than the newest one are ever deleted.
    much_later = now + timedelta(days=90)
    made = take_daily_backup(store.engine, folder, keep_days=1, now=much_later)
    assert made is not None and made.exists()
    assert not recent.exists()
    assert backups(folder, DAILY_PREFIX) == [made]
    store.close()


def test_zero_days_turns_backups_off(config):
    store = Store.open(config)
    assert take_daily_backup(store.engine, config.backups_dir, keep_days=0) is None
    assert not config.backups_dir.exists() or not list(config.backups_dir.glob(DAILY_PREFIX + "*"))
    store.close()


def test_backup_while_another_thread_writes_is_consistent(config):
    store = Store.open(config)
    session = store.create_session()
    stop = threading.Event()

    def writer():
        n = 0
        while not stop.is_set():
            store.add_message(session.id, Message(role="user", content=f"message {n}"))
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        made = take_daily_backup(store.engine, config.backups_dir, keep_days=7)
    finally:
        stop.set()
        thread.join()
    copy = sqlite3.connect(made)
    assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    copy.close()
    store.close()


def test_daily_backups_thread_takes_one_at_start(config):
    store = Store.open(config)
    runner = DailyBackups(store.engine, config.backups_dir, keep_days=3, start_delay=0).start()
    try:
        for _ in range(100):
            if newest_backup(config.backups_dir):
                break
            threading.Event().wait(0.05)
    finally:
        runner.stop()
    newest = newest_backup(config.backups_dir)
    assert newest is not None and backup_time(newest) is not None
    store.close()


def test_names_without_a_timestamp_are_ignored(tmp_path):
    (tmp_path / "daily-notes.db").write_text("")
    (tmp_path / "daily-20261201-120000-000000.db.partial").write_text("")
    assert backups(tmp_path) == []


def test_daily_backups_wait_before_the_first_copy(config):
    store = Store.open(config)
    runner = DailyBackups(store.engine, config.backups_dir, keep_days=3, start_delay=30).start()
    threading.Event().wait(0.3)
    runner.stop()
    assert newest_backup(config.backups_dir) is None
    store.close()


def test_a_copy_killed_midway_is_cleared_by_the_next_backup(config):
    import os
    import time

    from hermes.store.migrate import STALE_PARTIAL_SECONDS, backup_database

    store = Store.open(config)
    folder = config.backups_dir
    folder.mkdir(parents=True, exist_ok=True)
    old = time.time() - STALE_PARTIAL_SECONDS - 60
    dead = folder / f"{DAILY_PREFIX}20260101-000000-000000.db.partial"
    journal = folder / (dead.name + "-journal")
    running = folder / f"{DAILY_PREFIX}20260102-000000-000000.db.partial"  # still being written
    for path in (dead, journal, running):
        path.write_bytes(b"x" * 1024)
    for path in (dead, journal):
        os.utime(path, (old, old))
    made = backup_database(store.engine, folder, prefix=DAILY_PREFIX)
    assert made.exists()
    assert not dead.exists() and not journal.exists()
    assert running.exists()
    store.close()
