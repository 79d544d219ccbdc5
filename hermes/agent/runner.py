"""Run a turn on a worker thread so the caller's thread stays free for Ctrl-C.

The CLI and the REPL read events from a queue; pressing Ctrl-C sets the
turn's cancel event, and the loop stops at its next safe point, saving the
partial answer. The turn is started by :meth:`TurnThread.start`, on the
caller's thread, so a busy session (SessionBusy) is reported right there.
The worker always ends its stream with a ``Done`` event, even when something
unexpected breaks; a curator ``SkillEvent`` may follow it (``late_events``).
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Iterator

from hermes.errors import HermesError
from hermes.events import Done, ErrorEvent, Event

log = logging.getLogger(__name__)

_END = object()  # the turn's events are over, curation included


class TurnThread:
    """One turn running in the background, its events readable in order."""

    def __init__(self, agent, session_id: int, text: str):
        self.agent = agent
        self.session_id = session_id
        self.text = text
        self.turn_id = uuid.uuid4().hex
        self.cancel = threading.Event()
        self._queue: queue.Queue = queue.Queue()
        self._events: Iterator[Event] | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"turn-{self.turn_id[:8]}", daemon=True
        )

    def start(self) -> TurnThread:
        """Start the turn (SessionBusy / NotFound raise here), then run it in the background."""
        self._events = self.agent.run_turn(
            self.session_id, self.text, turn_id=self.turn_id, cancel=self.cancel
        )
        self._thread.start()
        return self

    def events(self, poll: float = 0.1) -> Iterator[Event]:
        """Yield events until ``Done``. KeyboardInterrupt reaches the caller between polls."""
        for event in self._until(poll):
            yield event
            if isinstance(event, Done):
                return

    def late_events(self, poll: float = 0.1) -> Iterator[Event]:
        """After ``Done``: the curator's events, until the turn's thread is finished."""
        yield from self._until(poll)

    def _until(self, poll: float) -> Iterator[Event]:
        while True:
            try:
                event = self._queue.get(timeout=poll)
            except queue.Empty:
                continue
            if event is _END:
                self._queue.put(_END)  # later readers see the end too
                return
            yield event

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        done = False
        try:
            for event in self._events:
                self._queue.put(event)
                done = done or isinstance(event, Done)
        except HermesError as exc:
            self._queue.put(ErrorEvent(message=exc.message))
        except Exception as exc:
            log.exception("turn %s failed", self.turn_id)
            self._queue.put(ErrorEvent(message=f"internal error: {type(exc).__name__}: {exc}"))
        finally:
            if not done:
                self._queue.put(Done(stop_reason="error"))
            self._queue.put(_END)
