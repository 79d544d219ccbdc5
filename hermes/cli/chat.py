"""`hermes chat -q TEXT`: one turn, non-interactive, streamed to stdout."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from collections.abc import Iterator

import click

from hermes.errors import Cancelled, HermesError
from hermes.text import cut_line, printable


class TurnFailed(HermesError):
    """The turn ended with an error event; its message was already shown."""


class TurnInterrupted(Cancelled):
    """Ctrl-C stopped the turn; what was said so far is saved."""

    exit_code = 130


@click.command()
@click.option("-q", "--query", "text", help="The message to send (default: read from stdin).")
@click.option(
    "--session", "session_id", type=int, help="Continue this session instead of a new one."
)
@click.option("--json", "as_json", is_flag=True, help="Print the turn's events as NDJSON.")
def chat(text: str | None, session_id: int | None, as_json: bool) -> None:
    """Send one message and stream the answer.

    The message is -q TEXT, or whatever comes on stdin
    (`echo "question" | hermes chat`). The answer goes to stdout; tool calls
    are shown briefly on stderr. With --json every stream event is printed as
    one JSON line instead. Ctrl-C cancels the turn (exit status 130); the
    partial answer is kept.
    """
    if text is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise click.UsageError(
                'no message: give it with -q TEXT or on stdin (echo "question" | hermes chat)'
            )
        text = sys.stdin.read()
    if not text.strip():
        raise click.BadParameter("the message is empty: give the text to send after -q or on stdin")
    from hermes.agent.runner import TurnThread
    from hermes.config import Config
    from hermes.runtime import Runtime

    runtime = Runtime(Config.from_env())
    try:
        agent = runtime.agent()
        store = runtime.store
        if session_id is None:
            session_id = store.create_session(source="cli", model=runtime.model).id
        else:
            store.get_session(session_id)
        # SessionBusy here names the running turn; nothing is written.
        turn = TurnThread(agent, session_id, text).start()
        printer = JsonPrinter(turn.turn_id) if as_json else PlainPrinter()
        error = None
        stop_reason = None
        try:
            with _ctrl_c_cancels(turn.cancel):
                for event in turn.events():
                    printer.show(event)
                    if event.type == "error":
                        error = event.message
                    elif event.type == "done":
                        stop_reason = event.stop_reason
                # The curator works after `done`; its skill event is part of the turn.
                for event in turn.late_events():
                    printer.show(event)
        except BrokenPipeError:
            # The reader went away (`| head -1`): stop the turn, keep what it said.
            turn.cancel.set()
            turn.join(timeout=5)
            raise
        printer.finish()
        # No session summary here: a one-shot command must not make a second,
        # hidden model call. The REPL and the web summarize when a session closes.
        if stop_reason == "cancelled":
            raise TurnInterrupted(
                f"the turn was cancelled; what was said so far is saved in session "
                f"{session_id} (continue with --session {session_id})"
            )
        if error:
            raise TurnFailed(error)
    finally:
        runtime.close()


@contextlib.contextmanager
def _ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """While the turn runs, Ctrl-C (SIGINT) asks it to stop instead of raising.

    KeyboardInterrupt could land in the middle of writing a line and leave
    half an NDJSON record; the turn instead stops at its next safe point and
    its last events (``done`` included) are still printed. A second Ctrl-C
    gives up waiting.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum, frame) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# Characters that JSON leaves raw but many line readers (Python's splitlines,
# JavaScript before ES2019) take as line breaks: escaped, one event stays one line.
LINE_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


class JsonPrinter:
    def __init__(self, turn_id: str):
        self.turn_id = turn_id
        self.seq = 0

    def show(self, event) -> None:
        from hermes.events import to_wire

        self.seq += 1
        line = json.dumps(to_wire(self.seq, self.turn_id, event), ensure_ascii=False)
        sys.stdout.write(line.translate(LINE_BREAKS) + "\n")
        sys.stdout.flush()

    def finish(self) -> None:
        pass


# What the user is told when a turn ended for a reason other than a complete answer.
STOP_NOTES = {
    "max_iterations": "[turn ended: max iterations; HERMES_MAX_ITERATIONS sets the limit]",
    "max_tokens": "[answer cut off: it reached the token limit (max_tokens); ask to continue]",
    "refusal": "[the model declined to answer; this exchange will not be sent to it again]",
    "interrupted": "[turn interrupted]",
}


class PlainPrinter:
    """Answer text on stdout as it streams; tools, skills and errors briefly on stderr."""

    def __init__(self):
        import shutil

        self.ends_with_newline = True
        # Tool lines fit the terminal (COLUMNS when stderr is not one).
        self.width = shutil.get_terminal_size((100, 24)).columns

    def show(self, event) -> None:
        kind = event.type
        if kind == "text":
            # Model output is hostile: no escape sequence reaches the terminal
            # (--json keeps the exact text).
            text = printable(event.delta)
            if not text:
                return
            sys.stdout.write(text)
            sys.stdout.flush()
            self.ends_with_newline = text.endswith("\n")
        elif kind == "tool_call":
            arguments = json.dumps(event.input, ensure_ascii=False)
            self._note(cut_line(f"→ {event.name}({arguments})", self.width))
        elif kind == "tool_result":
            status = "error" if event.is_error else "ok"
            # One line: the output's lines joined with ⏎, their own spacing kept.
            joined = " ⏎ ".join(line for line in event.output.splitlines() if line.strip())
            self._note(cut_line(f"  {status} in {event.duration_ms} ms: {joined}", self.width))
        elif kind == "skill":
            self._note(f"skill {event.action}: {event.name} (v{event.version})")
        elif kind == "compaction":
            from hermes.cli.render import compaction_line

            self._note(compaction_line(event))
        elif kind == "error":
            # `hermes: error: ...` is printed once, by main(), as the last line.
            self._break_line()
        elif kind == "done" and event.stop_reason in STOP_NOTES:
            self._note(STOP_NOTES[event.stop_reason])
        elif kind == "done":
            self._break_line()  # cancelled turns end with main()'s one line

    def _note(self, line: str) -> None:
        self._break_line()
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def _break_line(self) -> None:
        if not self.ends_with_newline:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.ends_with_newline = True

    def finish(self) -> None:
        self._break_line()
