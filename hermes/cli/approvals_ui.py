"""Approvals in the terminal: the inline question, and one line per decision in the transcript.

The REPL shows an approval request with the command in full and why it was
flagged, then waits for one key: ``o`` once, ``s`` for this session, ``a``
always, ``d`` deny (``y``/``n`` work too). No key before the timeout
(HERMES_APPROVAL_TIMEOUT) is a denial; Ctrl-C cancels the turn.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from hermes.text import printable

KEYS = {"o": "once", "y": "once", "s": "session", "a": "always", "d": "deny", "n": "deny"}
SAID = {
    "once": "approved once",
    "session": "approved for the rest of this session",
    "always": "approved always (see `hermes approvals list`)",
    "deny": "denied",
}


def show_request(console: Console, event, timeout: float, what: str | None = None) -> None:
    """The question: what would run (in full), why it is flagged, and the keys."""
    if what is None:
        what = event.input.get("command") if event.tool == "run_bash" else event.input.get("path")
    if not isinstance(what, str):
        what = ", ".join(f"{k}={v!r}" for k, v in event.input.items())
    console.print(
        Text(f"⚠ {event.tool} needs your approval: {printable(event.reason)}", style="bold yellow")
    )
    console.print(Text(printable(what), style="bold"), overflow="fold", soft_wrap=False)
    console.print(
        Text(
            f"[o] once  [s] this session  [a] always  [d] deny   "
            f"(no answer in {timeout:g} s denies)",
            style="yellow",
        )
    )


def ask_in_terminal(console: Console, desk, event, timeout: float, stream=None) -> str | None:
    """Wait for a key and answer ``desk``; returns the decision, or None when the desk timed out."""
    stream = stream or sys.stdin
    # The event's input is cut for very long commands; the desk's request holds it whole.
    request = next((r for r in desk.pending() if r.id == event.id), None)
    show_request(console, event, timeout, request.what if request else None)
    try:
        fd = stream.fileno()
        interactive = os.isatty(fd)
    except (AttributeError, OSError, ValueError):
        interactive = False
    if not interactive:
        desk.answer(event.id, "deny")
        console.print(Text("denied: there is no terminal to ask in", style="yellow"))
        return "deny"
    with _single_keys(fd):
        while desk.is_waiting(event.id):
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            key = os.read(fd, 1).decode("utf-8", errors="ignore").lower()
            decision = KEYS.get(key)
            if decision and desk.answer(event.id, decision):
                console.print(Text(SAID[decision], style="green" if decision != "deny" else "red"))
                return decision
    console.print(Text(f"no answer within {timeout:g} s: denied", style="red"))
    return None


@contextlib.contextmanager
def _single_keys(fd: int):
    """Keys arrive one by one, unechoed; Ctrl-C still interrupts."""
    try:
        import termios
        import tty
    except ImportError:
        yield
        return
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def decision_line(record: dict[str, Any]) -> str:
    """How a stored decision reads in the transcript: who decided what, and why."""
    decision, by = record.get("decision", "?"), record.get("by", "?")
    reason = record.get("reason", "")
    if decision == "refused":
        text = "refused: forbidden"
    elif decision == "auto":
        text = f"ran without asking ({record.get('note', 'HERMES_APPROVALS=auto')})"
    elif by == "earlier decision":
        text = "approved by your earlier decision" + (
            " for this session" if decision == "session" else " (always)"
        )
    elif decision == "deny":
        text = {"user": "denied by you", "timeout": "denied: nobody answered in time"}.get(
            by, f"denied ({record.get('note') or by})"
        )
    else:
        text = SAID.get(decision, decision) + " by you"
    return printable(f"{text} — {reason}" if reason else text)
