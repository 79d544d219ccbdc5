"""Read a model stream so that a cancel is seen at once, even while the model is silent.

A provider stream blocks in a socket read between chunks; a stalled model
would keep a cancelled turn alive until the stream timeout. The stream is
read on a helper thread instead, and the turn's thread waits on a queue that
it can stop waiting on. An abandoned reader ends by itself with its next
chunk or timeout and closes its HTTP response.

The queue is a ``queue.SimpleQueue`` (written in C, with no Python-level
condition variables): every chunk of every stream crosses it. It is
unbounded; a response is bounded by its ``max_tokens``, and the turn's thread
only hands chunks on.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")

POLL_SECONDS = 0.05


class TurnCancelled(Exception):
    """The cancel event was seen at a safe point (or the deadline passed)."""


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


_END = object()


def cancellable(
    stream: Iterator[T],
    cancel: threading.Event,
    *,
    deadline: float | None = None,
    on_idle: Callable[[], None] | None = None,
) -> Iterator[T]:
    """Yield from ``stream``; raise TurnCancelled as soon as ``cancel`` is set.

    ``deadline`` (a ``time.monotonic()`` value) ends the stream the same way
    when it passes. ``on_idle`` is called on the turn's thread whenever the
    stream has been silent for a poll interval (the loop saves its partial
    answer then).
    """
    items: queue.SimpleQueue = queue.SimpleQueue()
    abandoned = threading.Event()

    def read() -> None:
        try:
            for item in stream:
                if abandoned.is_set():
                    break
                items.put(item)
        except BaseException as exc:  # handed to the turn's thread, which decides
            items.put(_Failed(exc))
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
            items.put(_END)

    reader = threading.Thread(target=read, name="model-stream", daemon=True)
    reader.start()
    try:
        while True:
            if cancel.is_set() or (deadline is not None and time.monotonic() > deadline):
                raise TurnCancelled()
            try:
                item = items.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if on_idle is not None:
                    on_idle()
                continue
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        abandoned.set()
