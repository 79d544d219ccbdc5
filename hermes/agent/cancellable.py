"""Read a model stream so that a cancel is seen at once, even while the model is silent.

A provider stream blocks in a socket read between chunks; a stalled model
would keep a cancelled turn alive until the stream timeout. The stream is
read on a helper thread instead, and the turn's thread waits on a queue that
it can stop waiting on. An abandoned reader ends by itself with its next
chunk or timeout and closes its HTTP response.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

POLL_SECONDS = 0.05


class TurnCancelled(Exception):
    """The cancel event was seen at a safe point."""


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


_END = object()


def cancellable(stream: Iterator[T], cancel: threading.Event) -> Iterator[T]:
    """Yield from ``stream``; raise TurnCancelled as soon as ``cancel`` is set."""
    items: queue.Queue = queue.Queue(maxsize=256)
    abandoned = threading.Event()

    def read() -> None:
        try:
            for item in stream:
                while not abandoned.is_set():
                    try:
                        items.put(item, timeout=POLL_SECONDS)
                        break
                    except queue.Full:
                        continue
                if abandoned.is_set():
                    break
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
            if cancel.is_set():
                raise TurnCancelled()
            try:
                item = items.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        abandoned.set()
