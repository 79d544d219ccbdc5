"""search_files against patterns that backtrack: the server keeps running and the search ends.

``(a|a)+$`` on a line of 30 letters and a "!" needs about 2**30 steps: hours.
Python's ``re`` would hold the GIL all that time and freeze every thread.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hermes.errors import Cancelled, ToolError
from hermes.tools.registry import ToolContext
from hermes.tools.search import search_files

SLOW_LINE = "a" * 30 + "!"
# The first alternative backtracks on SLOW_LINE; "me" matches ordinary lines at once.
PATTERN = r"^(a|a)+$|me"
# Generous for a loaded machine: one line may use SEARCH_MATCH_TIME_LIMIT (1 s) of CPU.
RETURNS_WITHIN = 30.0


@pytest.fixture
def ctx(make_config) -> ToolContext:
    return ToolContext(config=make_config())


class Ticker:
    """Another Python thread, ticking every 10 ms; records its longest stall."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.ticks.append(time.monotonic())
            time.sleep(0.01)

    def __enter__(self) -> Ticker:
        self._thread.start()
        time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def longest_stall(self) -> float:
        return max(b - a for a, b in zip(self.ticks, self.ticks[1:], strict=False))


def timed(function, *args, **kwargs):
    start = time.monotonic()
    try:
        return function(*args, **kwargs), time.monotonic() - start
    except Exception as exc:  # the test inspects it
        return exc, time.monotonic() - start


def test_a_backtracking_pattern_ends_the_search_with_what_it_found(ctx, workspace: Path):
    (workspace / "a.txt").write_text(f"match me\n{SLOW_LINE}\nme too, never reached\n")
    with Ticker() as ticker:
        out, elapsed = timed(search_files.function, ctx, PATTERN)
    assert isinstance(out, str), out
    lines = out.splitlines()
    assert lines[0] == "a.txt:1: match me"  # the partial result
    assert "the pattern took too long: simplify it" in lines[1]
    assert "a.txt:2" in lines[1]  # where it stopped
    assert "never reached" not in out
    assert elapsed < RETURNS_WITHIN
    # The match ran with the GIL released: the other thread was never held for long.
    assert ticker.longest_stall() < elapsed / 2, (ticker.longest_stall(), elapsed)


def test_a_backtracking_pattern_with_nothing_found_is_an_error_saying_so(ctx, workspace):
    (workspace / "b.txt").write_text(SLOW_LINE + "\n")
    error, elapsed = timed(search_files.function, ctx, r"^(a|a)+$")
    assert isinstance(error, ToolError), error
    assert "the pattern took too long: simplify it" in error.message
    assert "b.txt:1" in error.message
    assert elapsed < RETURNS_WITHIN


def test_stop_ends_a_search_stuck_in_a_slow_match(ctx, workspace):
    (workspace / "c.txt").write_text((SLOW_LINE + "\n") * 3)
    threading.Timer(0.2, ctx.cancel.set).start()  # the user presses Stop
    error, elapsed = timed(search_files.function, ctx, r"^(a|a)+$")
    assert isinstance(error, Cancelled), error
    assert elapsed < RETURNS_WITHIN


def test_ordinary_patterns_still_match_like_python_re(ctx, workspace):
    (workspace / "d.py").write_text("def alpha():\n    return 1\nclass Beta:\n")
    assert search_files.function(ctx, r"^(def|class) \w+") == (
        "d.py:1: def alpha():\nd.py:3: class Beta:"
    )
