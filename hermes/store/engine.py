"""The SQLAlchemy engine for the memory store: SQLite in WAL with safe locking.

Why the transaction handling looks the way it does: Python's sqlite3 driver
opens transactions lazily with a plain (deferred) ``BEGIN``. A deferred
transaction that reads and then writes must upgrade its lock; when two
processes do that at once one of them gets SQLITE_BUSY immediately, and no
busy timeout helps. So we switch the driver's own transaction control off and
emit ``BEGIN`` ourselves: ``BEGIN IMMEDIATE`` for connections marked as
writers (they queue on the busy timeout instead of deadlocking), a plain
``BEGIN`` for readers (in WAL readers never block writers).

Writers of one process also take a lock of their own, one per database file,
before ``BEGIN IMMEDIATE``. SQLite's busy timeout makes a waiting writer poll
with growing sleeps (up to 100 ms each), so with a few dozen threads writing
at once (the web server's concurrent turns) the lock sat free while waiters
slept and a turn took seconds to start. A Python lock wakes the next writer
the moment the last one commits; other processes still queue on the busy
timeout.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DatabaseError

from hermes.errors import ConfigError, StoreError
from hermes.store import deferred_index, literal

BUSY_TIMEOUT_MS = 30_000
WRITE_OPTION = "hermes_write"
CACHE_KIB = 32_768


def sqlite_path(database_url: str) -> Path:
    """The database file of a ``sqlite:///`` URL; ConfigError for anything else."""
    try:
        url = make_url(database_url)
    except (ArgumentError, ValueError):
        raise ConfigError(
            "HERMES_DATABASE_URL is not a valid SQLAlchemy URL; use sqlite:///path/to/hermes.db."
        ) from None
    if url.get_backend_name() != "sqlite":
        raise ConfigError(
            f"HERMES_DATABASE_URL must be a SQLite URL (sqlite:///path/to/hermes.db): the memory "
            f"store needs SQLite's FTS5 search, and {url.get_backend_name()!r} has none."
        )
    if not url.database or url.database == ":memory:":
        raise ConfigError(
            "HERMES_DATABASE_URL points at an in-memory SQLite database; use a file, "
            "e.g. sqlite:///$HERMES_HOME/hermes.db, so memory survives a restart."
        )
    return Path(url.database).expanduser()


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection that writes nothing. In a folder we cannot write, SQLite cannot
    create the WAL index (-shm) a reader needs; the file is then read as immutable,
    which is right for a home nobody can write to."""
    uri = f"file:{quote(str(path))}"
    try:
        connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return connection
    except sqlite3.OperationalError:
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, check_same_thread=False)


def make_folders(config) -> None:
    """Create HERMES_HOME and the database's folder (private to the user) and the
    database file itself as 0600 before SQLite does; StoreError when impossible."""
    from hermes.privacy import create_private_file, private_folder, secure_home

    database = sqlite_path(config.database_url)
    folder = config.home
    try:
        private_folder(config.home)
        folder = database.parent
        if config.home in database.parents:
            private_folder(folder)
        else:  # someone else's folder (HERMES_DATABASE_URL): only the file is ours
            folder.mkdir(parents=True, exist_ok=True)
        create_private_file(database)
    except OSError as exc:
        raise StoreError(
            f"Cannot create the folder {folder}: {exc.strerror or exc}. Point HERMES_HOME "
            "(or HERMES_DATABASE_URL) at a writable place."
        ) from None
    secure_home(config.home)


def make_engine(database_url: str, *, read_only: bool = False) -> Engine:
    """An engine whose every connection runs the pragmas Hermes relies on.

    ``read_only`` opens the file without ever writing to it or beside it, for
    reading a database in a home the user cannot write (``hermes search``).
    """
    path = sqlite_path(database_url)  # validate early with a readable message
    extra = {"creator": lambda: _read_only_connection(path)} if read_only else {}
    engine = create_engine(
        database_url,
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000},
        # Each kept connection holds its own page cache (up to CACHE_KIB): four of them
        # bound what a long-running server keeps (with eight, the worker grew by 69 MB over
        # 1,000 turns, with four by 8 MB; bench/bench_web.py). Bursts get overflow
        # connections, closed again when returned.
        pool_size=4,
        max_overflow=16,
        # The most recently returned connection is handed out next: a round robin over
        # all of them keeps every cache cold (a search at a million messages needed
        # twice the CPU through the server).
        pool_use_lifo=True,
        **extra,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record) -> None:
        # Take transaction control away from the driver (see module docstring).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not read_only:
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        # A bigger page cache (default 2 MB) roughly halves FTS5 index writes on
        # bulk inserts; pages are allocated only as they are used.
        cursor.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        cursor.close()
        # The search index's triggers call hermes_literal() (see store/literal.py).
        literal.register(dbapi_connection)
        # ...and hermes_index_live() (see store/deferred_index.py).
        deferred_index.register(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


_writer_locks: dict[str, threading.RLock] = {}
_writer_locks_guard = threading.Lock()


def _writer_lock(engine: Engine) -> threading.RLock:
    """This process's lock for writing the engine's database file (see module docstring).

    Reentrant, so a writer that nests a second transaction meets SQLite's own
    lock (and its timeout) exactly as it did without this one.
    """
    key = str(engine.url.database)
    with _writer_locks_guard:
        lock = _writer_locks.get(key)
        if lock is None:
            lock = _writer_locks[key] = threading.RLock()
        return lock


@contextmanager
def _queued(engine: Engine) -> Iterator[None]:
    """Wait for this process's other writers. Past the busy timeout the writer goes
    on without the lock, so a writer stuck behind its own process fails the way
    it always did (SQLite's timeout, a StoreError), never hangs."""
    lock = _writer_lock(engine)
    held = lock.acquire(timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        yield
    finally:
        if held:
            lock.release()


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection in a ``BEGIN IMMEDIATE`` transaction, committed on success."""
    with _queued(engine), explained(engine), engine.connect() as connection:
        connection.execution_options(**{WRITE_OPTION: True})
        with connection.begin():
            yield connection


@contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection reading one consistent snapshot."""
    with explained(engine), engine.connect() as connection, connection.begin():
        yield connection


# What SQLite says when a file is not (or no longer) a sound database.
CORRUPTION_MESSAGES = ("file is not a database", "database disk image is malformed")


def is_corruption(reason: str) -> bool:
    return any(message in reason for message in CORRUPTION_MESSAGES)


@contextmanager
def explained(engine: Engine) -> Iterator[None]:
    """Turn SQLite's operational failures (disk full, read-only file, a lock
    held past the timeout, a corrupt file) into a StoreError saying what to check."""
    try:
        yield
    except DatabaseError as exc:
        reason = str(exc.orig) if exc.orig is not None else str(exc)
        if is_corruption(reason):
            raise StoreError(
                f"The database at {engine.url.database} is damaged ({reason}). Run "
                "`hermes db restore` to move it aside and put the newest copy from "
                "$HERMES_HOME/backups/ in its place (or `hermes db restore FILE` for another)."
            ) from exc
        raise StoreError(
            f"The database at {engine.url.database} failed: {reason}. Check that the disk "
            "has space and that the file and its folder are writable (SQLite keeps -wal and "
            "-shm files beside it); `hermes doctor` checks the rest."
        ) from exc
