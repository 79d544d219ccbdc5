"""The live turns of this process: each runs on its own thread, readers follow its events.

A browser tab is a poor owner for a turn: it reloads, sleeps, loses Wi-Fi, and
proxies cut long requests. So a turn belongs to the :class:`TurnPool`, not to
the HTTP request that started it. The pool runs ``run_turn(...)`` on a server
thread and appends every event, numbered from 1 (``seq``), to the turn's
ordered buffer as one ready NDJSON line. Any number of readers (the POST that
started it, ``GET /api/turns/<id>/events?after=N`` after a reload) follow that
buffer under one condition variable. A reader that goes away only stops
reading: nothing a reader does ever cancels a turn; only :meth:`TurnPool.cancel`
does, by setting the turn's cancel event, which the loop honours at its next
safe point (stop reason ``cancelled``).

Memory stays bounded: a finished turn's buffer is kept for replay for
``keep_seconds`` and among the newest ``keep_turns`` finished turns (and
within a byte budget), then dropped. Asking for a dropped turn raises
:class:`TurnGone`, which names the session whose stored messages hold the
whole result (the web answers 410 with a pointer to it).

Nothing here imports Flask: the interface (start, read after a seq, cancel,
owner of a session) is small enough that a Redis-backed pool could replace
this in-process one when Hermes grows past one process.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from typing import Any

from hermes.errors import HermesError, NotFound, SessionBusy
from hermes.events import Done, ErrorEvent, Event, to_wire

log = logging.getLogger(__name__)

# run_turn(session_id, text, turn_id=..., cancel=...) -> the turn's events (Agent.run_turn).
RunTurn = Callable[..., Iterator[Event]]

PING = b'{"type":"ping"}\n'

# A turn's buffer never holds more than this; past it the oldest lines go, and
# a reader that needs them is told to reload the session (TurnGone). A long
# tool-using answer is a few thousand events, so this is rarely reached.
MAX_EVENTS_PER_TURN = 50_000
MAX_BYTES_PER_TURN = 8 * 1024 * 1024
# All finished turns kept for replay together stay under this.
MAX_FINISHED_BYTES = 64 * 1024 * 1024
# Ids of dropped turns remembered so their readers get "gone" (410), not "unknown" (404).
MAX_TOMBSTONES = 10_000


class TurnGone(HermesError):
    """The turn is over and its events are no longer kept; its messages are in the session."""

    code = "turn_gone"

    def __init__(self, turn_id: str, session_id: int | None):
        where = (
            f" Reload session {session_id}: its messages hold the whole turn." if session_id else ""
        )
        super().__init__(f"Turn {turn_id} has ended and its event stream is no longer kept.{where}")
        self.turn_id = turn_id
        self.session_id = session_id


class PoolClosed(HermesError):
    """The server is shutting down and takes no new turns."""

    code = "shutting_down"

    def __init__(self):
        super().__init__("The server is restarting; send the message again in a few seconds.")


def wire_line(seq: int, turn_id: str, event: Event) -> bytes:
    """One event as the NDJSON line every reader gets (serialized once, shared by all)."""
    data = json.dumps(to_wire(seq, turn_id, event), ensure_ascii=False, separators=(",", ":"))
    # Model text is checked by the loop; "replace" keeps a stray surrogate from
    # breaking the stream should one ever get through.
    return (data + "\n").encode("utf-8", errors="replace")


class LiveTurn:
    """One turn: its ordered event buffer, its cancel event, and the readers' condition."""

    def __init__(self, turn_id: str, session_id: int, *, clock: Callable[[], float]):
        self.turn_id = turn_id
        self.session_id = session_id
        self.cancel = threading.Event()
        self._clock = clock
        self._cond = threading.Condition()
        self._lines: deque[bytes] = deque()
        self._first_seq = 1  # seq of self._lines[0]
        self._next_seq = 1
        self._bytes = 0
        self.stop_reason: str | None = None  # set by the Done event
        self.finished = False  # the generator has ended (after the curator too)
        self.finished_at: float | None = None
        self.started = threading.Event()  # the first event is out, or starting failed
        self.start_error: BaseException | None = None
        self.thread: threading.Thread | None = None

    # -- writing (the turn's own thread) ---------------------------------------

    def publish(self, event: Event) -> int:
        """Append an event; wakes every reader. Returns its seq."""
        with self._cond:
            seq = self._next_seq
            line = wire_line(seq, self.turn_id, event)
            self._lines.append(line)
            self._next_seq += 1
            self._bytes += len(line)
            while len(self._lines) > 1 and (
                len(self._lines) > MAX_EVENTS_PER_TURN or self._bytes > MAX_BYTES_PER_TURN
            ):
                self._bytes -= len(self._lines.popleft())
                self._first_seq += 1
            if isinstance(event, Done):
                self.stop_reason = event.stop_reason
            self._cond.notify_all()
        return seq

    def finish(self) -> None:
        with self._cond:
            self.finished = True
            self.finished_at = self._clock()
            self._cond.notify_all()

    # -- reading (any thread) --------------------------------------------------

    @property
    def last_seq(self) -> int:
        with self._cond:
            return self._next_seq - 1

    @property
    def size(self) -> int:
        """Bytes held in the buffer."""
        with self._cond:
            return self._bytes

    @property
    def status(self) -> str:
        """``running``, ``answered`` (done sent, the curator may still add a skill) or ``finished``."""
        with self._cond:
            if self.finished:
                return "finished"
            return "answered" if self.stop_reason else "running"

    def read(
        self, after: int = 0, *, heartbeat: float = 15.0, max_seconds: float | None = None
    ) -> Iterator[bytes]:
        """Lines with seq > ``after``, then live ones until the turn ends.

        Yields a ping after ``heartbeat`` seconds without a line, and stops by
        itself after ``max_seconds`` (the client resumes with ``after=``).
        Several waiting lines come as one chunk. Raises :class:`TurnGone` when
        the lines asked for were already dropped from a full buffer. Closing
        this generator (a client that left) touches nothing but the reader.
        """
        clock = self._clock
        deadline = None if max_seconds is None else clock() + max_seconds
        next_seq = max(after, 0) + 1
        last_write = clock()
        while True:
            with self._cond:
                while True:
                    if next_seq < self._first_seq:
                        raise TurnGone(self.turn_id, self.session_id)
                    ready = self._next_seq - next_seq
                    if ready > 0 or self.finished:
                        break
                    now = clock()
                    wake = last_write + heartbeat
                    if deadline is not None:
                        wake = min(wake, deadline)
                    if now >= wake:
                        break
                    self._cond.wait(wake - now)
                chunk = b""
                if ready > 0:
                    start = next_seq - self._first_seq
                    chunk = b"".join(self._lines[i] for i in range(start, start + ready))
                    next_seq += ready
                finished = self.finished and next_seq >= self._next_seq
            now = clock()
            if chunk:
                yield chunk
                last_write = clock()
            elif finished:
                return
            elif now >= last_write + heartbeat:
                yield PING
                last_write = clock()
            if finished:
                return
            if deadline is not None and clock() >= deadline:
                return


class TurnPool:
    """The registry of this process's turns: live ones and recently finished ones."""

    def __init__(
        self,
        run_turn: RunTurn,
        *,
        keep_seconds: float = 600.0,
        keep_turns: int = 100,
        max_finished_bytes: int = MAX_FINISHED_BYTES,
        session_of_turn: Callable[[str], int | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        """``run_turn`` is ``Agent.run_turn`` (or a function building an agent and calling it).

        ``session_of_turn`` looks up the session of a turn this pool never saw
        (one from before a restart), so its readers get a pointer to it.
        """
        self._run_turn = run_turn
        self.keep_seconds = keep_seconds
        self.keep_turns = keep_turns
        self.max_finished_bytes = max_finished_bytes
        self._session_of_turn = session_of_turn
        self._clock = clock
        self._lock = threading.Lock()
        self._turns: dict[str, LiveTurn] = {}  # every turn still held, live or finished
        self._busy: dict[int, LiveTurn] = {}  # session id -> its turn until Done
        self._finished: OrderedDict[str, LiveTurn] = OrderedDict()  # oldest first
        self._tombstones: OrderedDict[str, int] = OrderedDict()  # dropped turn -> session
        self._closed = False

    # -- the interface ---------------------------------------------------------

    def start(self, session_id: int, text: str) -> LiveTurn:
        """Start a turn on its own thread and return once its first event is out.

        Errors the turn raises before it writes anything (an unknown session,
        an empty message, a busy session) come out of here, so the caller can
        answer them; everything after becomes ``error`` and ``done`` events.
        """
        turn = LiveTurn(uuid.uuid4().hex, session_id, clock=self._clock)
        with self._lock:
            if self._closed:
                raise PoolClosed()
            busy = self._busy.get(session_id)
            if busy is not None:
                raise SessionBusy(session_id, busy.turn_id)
            self._busy[session_id] = turn
            self._turns[turn.turn_id] = turn
        try:
            events = self._run_turn(session_id, text, turn_id=turn.turn_id, cancel=turn.cancel)
            turn.thread = threading.Thread(
                target=self._run, args=(turn, events), name=f"turn-{turn.turn_id[:8]}", daemon=True
            )
            turn.thread.start()
        except BaseException:
            self._forget(turn)
            raise
        turn.started.wait()
        if turn.start_error is not None:
            self._forget(turn)
            raise turn.start_error
        return turn

    def get(self, turn_id: str) -> LiveTurn:
        """The turn, live or kept for replay; TurnGone if dropped, NotFound if never known."""
        with self._lock:
            self._evict()
            turn = self._turns.get(turn_id)
            if turn is not None:
                return turn
            session_id = self._tombstones.get(turn_id)
        if session_id is None and self._session_of_turn is not None:
            session_id = self._session_of_turn(turn_id)
        if session_id is not None:
            raise TurnGone(turn_id, session_id)
        raise NotFound(f"There is no turn {turn_id!r}.")

    def cancel(self, turn_id: str) -> LiveTurn:
        """Ask the turn to stop at its next safe point. Cancelling a finished turn does nothing."""
        turn = self.get(turn_id)
        if not turn.finished:
            turn.cancel.set()
        return turn

    def running(self, session_id: int) -> str | None:
        """The id of the session's turn that has not sent ``done`` yet, if any."""
        with self._lock:
            turn = self._busy.get(session_id)
            return turn.turn_id if turn else None

    def live_turns(self) -> list[LiveTurn]:
        """Turns whose thread is still running."""
        with self._lock:
            return [t for t in self._turns.values() if not t.finished]

    def kept_turns(self) -> int:
        """Finished turns still held for replay."""
        with self._lock:
            self._evict()
            return len(self._finished)

    def shutdown(self, timeout: float = 10.0) -> bool:
        """Take no new turns, cancel the running ones, and wait for them to stop.

        Called when the server is told to stop (SIGTERM): each turn stops at a
        safe point and saves what it has, so the restart finds no session busy.
        Returns True when every turn ended within ``timeout``.
        """
        with self._lock:
            self._closed = True
            live = [t for t in self._turns.values() if not t.finished]
        for turn in live:
            turn.cancel.set()
        deadline = self._clock() + timeout
        for turn in live:
            if turn.thread is not None:
                turn.thread.join(max(deadline - self._clock(), 0))
        return all(t.finished for t in live)

    # -- the turn's thread -----------------------------------------------------

    def _run(self, turn: LiveTurn, events: Iterator[Event]) -> None:
        done = False
        try:
            try:
                first = next(events)
            except StopIteration:
                first = None
            except BaseException as exc:
                # Nothing was written yet: the caller of start() answers this.
                turn.start_error = exc
                return
            if first is not None:
                turn.publish(first)
            turn.started.set()
            if first is not None:
                for event in events:
                    turn.publish(event)
                    if isinstance(event, Done):
                        done = True
                        self._release(turn)  # the session is free; a curator may still run
        except Exception as exc:
            if isinstance(exc, HermesError):
                log.warning("turn %s failed: %s", turn.turn_id, exc.message)
            else:
                log.exception("turn %s failed", turn.turn_id)
            if not done:  # after done (the curator's part) the answer stands; the log has it
                message = exc.message if isinstance(exc, HermesError) else "internal error"
                turn.publish(ErrorEvent(message=f"{message}; the turn stopped here."))
        finally:
            if turn.start_error is None:
                if not done:
                    # Exactly one done per turn, even when the loop broke.
                    reason = "cancelled" if turn.cancel.is_set() else "error"
                    turn.publish(Done(stop_reason=reason))
                self._release(turn)
                turn.finish()
                self._retire(turn)
            turn.started.set()
            close = getattr(events, "close", None)
            if close is not None:
                close()

    # -- bookkeeping -----------------------------------------------------------

    def _release(self, turn: LiveTurn) -> None:
        with self._lock:
            if self._busy.get(turn.session_id) is turn:
                del self._busy[turn.session_id]

    def _forget(self, turn: LiveTurn) -> None:
        self._release(turn)
        with self._lock:
            self._turns.pop(turn.turn_id, None)

    def _retire(self, turn: LiveTurn) -> None:
        with self._lock:
            self._finished[turn.turn_id] = turn
            self._evict()

    def _evict(self) -> None:
        """Drop finished turns past their time, their count or the byte budget (lock held)."""
        now = self._clock()
        total = sum(t.size for t in self._finished.values())
        while self._finished:
            turn_id, oldest = next(iter(self._finished.items()))
            expired = now - (oldest.finished_at or now) >= self.keep_seconds
            if not (
                expired or len(self._finished) > self.keep_turns or total > self.max_finished_bytes
            ):
                break
            del self._finished[turn_id]
            self._turns.pop(turn_id, None)
            total -= oldest.size
            self._tombstones[turn_id] = oldest.session_id
            while len(self._tombstones) > MAX_TOMBSTONES:
                self._tombstones.popitem(last=False)

    def describe(self, turn: LiveTurn) -> dict[str, Any]:
        """The turn as JSON for the API."""
        return {
            "id": turn.turn_id,
            "session_id": turn.session_id,
            "status": turn.status,
            "stop_reason": turn.stop_reason,
            "last_seq": turn.last_seq,
            "cancel_requested": turn.cancel.is_set(),
        }
