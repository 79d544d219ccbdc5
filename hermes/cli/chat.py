"""`hermes chat -q TEXT`: one turn, non-interactive, streamed to stdout."""

from __future__ import annotations

import json
import sys

import click

from hermes.errors import HermesError


class TurnFailed(HermesError):
    """The turn ended with an error event; its message was already shown."""


@click.command()
@click.option("-q", "--query", "text", required=True, help="The message to send.")
@click.option(
    "--session", "session_id", type=int, help="Continue this session instead of a new one."
)
@click.option("--json", "as_json", is_flag=True, help="Print the turn's events as NDJSON.")
def chat(text: str, session_id: int | None, as_json: bool) -> None:
    """Send one message and stream the answer.

    The answer goes to stdout; tool calls are shown briefly on stderr. With
    --json every stream event is printed as one JSON line instead.
    """
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
        turn = TurnThread(agent, session_id, text).start()
        printer = JsonPrinter(turn.turn_id) if as_json else PlainPrinter()
        error = None
        try:
            for event in turn.events():
                printer.show(event)
                if event.type == "error":
                    error = event.message
        except KeyboardInterrupt:
            turn.cancel.set()
            for event in turn.events():
                printer.show(event)
        printer.finish()
        runtime.summarize_session(session_id)
        if error:
            raise TurnFailed(error)
    finally:
        runtime.close()


class JsonPrinter:
    def __init__(self, turn_id: str):
        self.turn_id = turn_id
        self.seq = 0

    def show(self, event) -> None:
        from hermes.events import to_wire

        self.seq += 1
        sys.stdout.write(json.dumps(to_wire(self.seq, self.turn_id, event), ensure_ascii=False))
        sys.stdout.write("\n")
        sys.stdout.flush()

    def finish(self) -> None:
        pass


class PlainPrinter:
    """Answer text on stdout as it streams; tools, skills and errors briefly on stderr."""

    def __init__(self):
        self.ends_with_newline = True

    def show(self, event) -> None:
        kind = event.type
        if kind == "text":
            sys.stdout.write(event.delta)
            sys.stdout.flush()
            self.ends_with_newline = event.delta.endswith("\n")
        elif kind == "tool_call":
            self._note(f"→ {event.name}({brief(json.dumps(event.input, ensure_ascii=False))})")
        elif kind == "tool_result":
            status = "error" if event.is_error else "ok"
            self._note(f"  {status} in {event.duration_ms} ms: {brief(event.output)}")
        elif kind == "skill":
            self._note(f"skill {event.action}: {event.name} (v{event.version})")
        elif kind == "error":
            # `hermes: error: ...` is printed once, by main(), as the last line.
            self._break_line()
        elif kind == "done" and event.stop_reason in ("cancelled", "max_iterations"):
            self._note(f"[turn ended: {event.stop_reason.replace('_', ' ')}]")

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


def brief(text: str, limit: int = 100) -> str:
    """One line of at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
