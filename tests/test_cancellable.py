"""Reading a model stream on a helper thread: order, errors, cancel and deadline."""

from __future__ import annotations

import threading
import time

import pytest

from hermes.agent.cancellable import TurnCancelled, cancellable


def _released(items, gate: threading.Event):
    """Yield ``items`` only once ``gate`` is set, so they are all waiting together."""
    gate.wait(5)
    yield from items


def test_items_come_in_order():
    gate = threading.Event()
    stream = cancellable(_released(["a", "b", "c"], gate), threading.Event())
    gate.set()
    time.sleep(0.2)
    assert list(stream) == ["a", "b", "c"]


def test_an_error_after_items_still_surfaces():
    gate = threading.Event()

    def source():
        gate.wait(5)
        yield "a"
        yield "b"
        raise ConnectionError("cut")

    stream = cancellable(source(), threading.Event())
    gate.set()
    time.sleep(0.2)
    assert [next(stream), next(stream)] == ["a", "b"]
    with pytest.raises(ConnectionError, match="cut"):
        next(stream)


def test_cancel_is_seen_while_the_model_is_silent():
    silent = threading.Event()

    def source():
        yield "a"
        silent.wait(5)
        yield "never"

    cancel = threading.Event()
    stream = cancellable(source(), cancel)
    assert next(stream) == "a"
    threading.Timer(0.1, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(TurnCancelled):
        next(stream)
    assert time.monotonic() - started < 1.0
    silent.set()


def test_a_deadline_ends_a_silent_stream():
    silent = threading.Event()

    def source():
        silent.wait(5)
        yield "late"

    stream = cancellable(source(), threading.Event(), deadline=time.monotonic() + 0.1)
    with pytest.raises(TurnCancelled):
        next(stream)
    silent.set()
