"""The turn registry: which turn owns a session right now, and which process runs it.

A turn is a row in ``turns`` from the moment it starts until it finishes.
The partial unique index ``ix_turns_one_running`` lets at most one turn per
session be ``running``, so two threads or two processes racing to start a
turn cannot both win: the loser gets :class:`~hermes.errors.SessionBusy`.

Every running turn names its owner: host, pid and the process's start time
(so a recycled pid is not mistaken for the owner), plus a heartbeat the owner
refreshes while the turn runs. A turn whose owner is gone (killed, crashed,
restarted) is closed as ``interrupted`` the next time anyone looks: at
start-up, when a new turn meets it, or when asked which turn is running. So
no session stays busy forever.
"""

from __future__ import annotations

import os
import socket
import threading
from datetime import timedelta

from sqlalchemy import Connection, select, update

from hermes.errors import HermesError
from hermes.store.models import messages_table, turns_table, utcnow

# How often a running turn's owner refreshes its heartbeat, and how old a
# heartbeat may get before a turn of another host (or an unknown owner) is
# taken for dead. Same-host owners are checked directly by pid.
HEARTBEAT_SECONDS = 20.0
STALE_AFTER = timedelta(seconds=120)

_live: set[str] = set()
_live_lock = threading.Lock()


def _proc_stat(pid: int) -> list[str] | None:
    """Process ``pid``'s /proc stat fields from the state on (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; fields after it don't.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields if len(fields) > 19 else None


def _process_started(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks after boot), or None where unknown."""
    fields = _proc_stat(pid)
    return fields[19] if fields else None


HOST = socket.gethostname()[:255]
PID = os.getpid()
STARTED = _process_started(PID) or ""


def _own_started() -> str:
    # After a fork (gunicorn workers) the child is another process.
    return STARTED if os.getpid() == PID else (_process_started(os.getpid()) or "")


def owner_values() -> dict:
    """The owner columns of a turn this process starts."""
    return {"pid": os.getpid(), "host": HOST, "process_started": _own_started()}


def mark_live(turn_id: str) -> bool:
    """Note a turn as running in this process; False if it already was."""
    with _live_lock:
        if turn_id in _live:
            return False
        _live.add(turn_id)
        return True


def mark_done(turn_id: str) -> None:
    with _live_lock:
        _live.discard(turn_id)


def _pid_alive(pid: int) -> bool:
    fields = _proc_stat(pid)
    if fields is not None and fields[0] in ("Z", "X"):
        return False  # killed, not yet reaped by its parent
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def is_stale(row, now=None) -> bool:
    """True when the owner of running turn ``row`` is certainly gone."""
    now = now or utcnow()
    if row.host == HOST and row.pid is not None:
        if row.pid == os.getpid() and (row.process_started or "") == _own_started():
            with _live_lock:
                return row.id not in _live
        if not _pid_alive(row.pid):
            return True
        # Alive, unless the pid was recycled by another process.
        started = _process_started(row.pid)
        return started is not None and bool(row.process_started) and started != row.process_started
    beat = row.heartbeat_at or row.started_at
    return beat is None or now - beat > STALE_AFTER


def running_row(connection: Connection, session_id: int):
    t = turns_table.c
    return connection.execute(
        select(turns_table).where(t.session_id == session_id, t.status == "running")
    ).first()


def stale_rows(connection: Connection) -> list:
    """Every running turn whose owner is gone."""
    now = utcnow()
    rows = connection.execute(select(turns_table).where(turns_table.c.status == "running")).all()
    return [row for row in rows if is_stale(row, now)]


def close(connection: Connection, turn_id: str, stop_reason: str) -> bool:
    """Finish a running turn; False when it was not running any more."""
    result = connection.execute(
        update(turns_table)
        .where(turns_table.c.id == turn_id, turns_table.c.status == "running")
        .values(status="finished", stop_reason=stop_reason, finished_at=utcnow())
    )
    return result.rowcount > 0


def heartbeat(connection: Connection, turn_id: str) -> None:
    connection.execute(
        update(turns_table)
        .where(turns_table.c.id == turn_id, turns_table.c.status == "running")
        .values(heartbeat_at=utcnow())
    )


def session_of(connection: Connection, turn_id: str) -> int | None:
    return connection.execute(
        select(turns_table.c.session_id).where(turns_table.c.id == turn_id)
    ).scalar()


def partial_messages(connection: Connection, session_id: int) -> list:
    m = messages_table.c
    return connection.execute(
        select(m.id, m.content).where(m.session_id == session_id, m.partial.is_(True))
    ).all()


class Heartbeat:
    """Refreshes a running turn's heartbeat on a daemon thread until stopped."""

    def __init__(self, beat, interval: float = HEARTBEAT_SECONDS):
        self._beat = beat
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="turn-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._beat()
            except HermesError:  # a busy or full database must not end the turn
                continue
