"""Turn events drawn with rich: streamed markdown, dim tool lines, skill call-outs.

:class:`TurnView` consumes the events of one turn (``show(event)`` for each,
then ``close()``). The answer streams through a small ``rich.Live`` region
holding only the paragraph being written; each finished paragraph is printed
above it as rendered markdown and never redrawn again. Redrawing one short
block instead of the whole answer is what keeps long answers from flickering
or scrolling the live region off the screen. When stdout is not a terminal the
text is written raw, as it arrives, for scripts.

Everything shown here came from a model or a tool, so it is treated as
hostile: terminal control sequences are stripped and nothing is parsed as
rich markup.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.text import Text

from hermes.events import Event
from hermes.text import cut_line, printable

# C0 controls except tab and newline, DEL, and C1 controls: an ESC in a tool's
# output must not be able to move the cursor or retitle the terminal.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

RESULT_LINES = 4
CALL_WIDTH = 100


clean = printable


def format_call(name: str, arguments: dict[str, Any], limit: int = CALL_WIDTH) -> str:
    """A tool call as a compact Python-like call: ``read_file(path='a.txt')``, cut to
    ``limit`` cells at a word boundary (spaces inside the arguments are kept)."""
    parts = []
    for key, value in (arguments or {}).items():
        shown = (
            repr(value) if isinstance(value, str | int | float | bool) or value is None else None
        )
        if shown is None:
            shown = json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"{key}={shown}")
    return cut_line(f"{name}({', '.join(parts)})", limit)


def fold(text: str, lines: int = RESULT_LINES, width: int = 110) -> str:
    """The first ``lines`` lines of ``text`` (each cut to ``width`` cells, indentation
    kept), noting how many were left out."""
    all_lines = clean(text).rstrip("\n").split("\n") if text.strip() else ["(no output)"]
    shown = [cut_line(line, width) for line in all_lines[:lines]]
    hidden = len(all_lines) - len(shown)
    if hidden > 0:
        shown.append(f"… {hidden} more line{'s' if hidden != 1 else ''}")
    return "\n".join(shown)


def skill_line(action: str, name: str, version: int) -> str:
    """How a skill event reads to the user."""
    if action == "created":
        return f"learned a new skill: {name}"
    if action == "refined":
        return f"refined skill {name} (v{version})"
    return f"using skill {name}"


def usage_line(event) -> str:
    """``1,234 in · 56 out tokens · $0.0012`` (cost only when the provider's price is known)."""
    parts = [f"{event.input_tokens:,} in", f"{event.output_tokens:,} out tokens"]
    if event.cache_read_tokens:
        parts.insert(1, f"{event.cache_read_tokens:,} cached")
    if event.cost_usd is not None:
        parts.append(f"${event.cost_usd:.4f}")
    return " · ".join(parts)


COMPACTION_MARKER = "earlier messages summarized"


def compaction_line(event) -> str:
    """The transcript marker for a compaction (live, and on /resume)."""
    covered = getattr(event, "messages_covered", 0)
    what = f"{covered:,} messages in the summary" if covered else "old tool outputs shortened"
    return (
        f"── {COMPACTION_MARKER} ({what}; ~{event.tokens_before:,} → "
        f"~{event.tokens_after:,} tokens; all still stored and searchable) ──"
    )


def split_markdown(text: str) -> tuple[str, str]:
    """Split streamed markdown into (finished blocks, the block still being written).

    A block ends at a blank line outside a fenced code block; a fence's own
    blank lines do not end it.
    """
    in_fence = False
    fence = ""
    cut = 0
    offset = 0
    for line in text.splitlines(keepends=True):
        offset += len(line)
        if not line.endswith("\n"):
            break  # the last line is still being written
        match = _FENCE.match(line)
        if match:
            marker = match.group(1)
            if not in_fence:
                in_fence, fence = True, marker[0] * 3
            elif marker.startswith(fence):
                in_fence = False
        elif not in_fence and not line.strip():
            cut = offset
    return text[:cut], text[cut:]


class MarkdownStream:
    """Streams markdown into a terminal: finished blocks printed once, the last one live."""

    def __init__(self, console: Console):
        self.console = console
        self.pending = ""
        self.live = Live(
            Text(""),
            console=console,
            # Redrawn on each delta only: an idle timer would erase and redraw
            # an unchanged block many times a second, which some terminals show as flicker.
            auto_refresh=False,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
            vertical_overflow="crop",
        )
        self.live.start(refresh=False)

    def write(self, delta: str) -> None:
        self.pending += delta
        done, self.pending = split_markdown(self.pending)
        if done.strip():
            # Printed above the live region, which stays at the bottom (emptied
            # first, so the finished block does not flash twice).
            self.live.update(Text(""))
            self.console.print(Markdown(done.strip("\n")))
        self.live.update(_Tail(self._block(), self.console.height - 2), refresh=True)

    def _block(self):
        return Markdown(self.pending) if self.pending.strip() else Text("")

    def close(self) -> None:
        self.live.update(self._block())  # stop() draws it in full, however tall
        self.live.stop()


class _Tail:
    """The last ``height`` lines of a renderable: a live region taller than the
    screen cannot be redrawn in place (the cursor cannot move above the screen)."""

    def __init__(self, renderable, height: int):
        self.renderable = renderable
        self.height = max(1, height)

    def __rich_console__(self, console, options):
        lines = console.render_lines(self.renderable, options, pad=False)
        for line in lines[-self.height :]:
            yield from line
            yield Segment.line()


class TurnView:
    """Draws one turn's events as they arrive. Call :meth:`close` when the turn ends."""

    def __init__(self, console: Console, *, markdown: bool | None = None):
        self.console = console
        self.markdown = console.is_terminal if markdown is None else markdown
        self.stream: MarkdownStream | None = None
        self.at_line_start = True  # for raw (non-terminal) text
        self.text_seen = False
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.waiting = None  # a rich Status: "thinking…" or "running TOOL…"

    def show(self, event: Event) -> None:
        """Draw one event."""
        kind = event.type
        if kind == "ping":
            return
        self._stop_waiting()
        if kind == "text":
            self._text(clean(event.delta))
            return
        if kind == "turn_start":
            self._wait("thinking…")
            return
        self._end_text()
        # Tool lines are cut to the terminal's width: a wrapped line would
        # lose its indent and read as part of the answer.
        width = max(20, self.console.width)
        if kind == "tool_call":
            call = format_call(event.name, event.input, width - 2)
            self.console.print(Text(f"→ {call}", style="dim"), no_wrap=True, overflow="crop")
            self._wait(f"running {event.name}…")
        elif kind == "tool_result":
            style = "red" if event.is_error else "dim"
            body = Text(_indent(fold(event.output, width=width - 2), "  "), style=style)
            self.console.print(body, no_wrap=True, overflow="crop")
            self._wait("thinking…")
        elif kind == "skill":
            line = skill_line(event.action, event.name, event.version)
            self.console.print(Text(f"✦ {line}", style="bold magenta"))
        elif kind == "compaction":
            self.console.print(Text(compaction_line(event), style="dim cyan"))
        elif kind == "usage":
            if event.input_tokens or event.output_tokens:
                self.console.print(Text(usage_line(event), style="dim"))
        elif kind == "error":
            self.error = event.message
            self.console.print(Text(f"error: {clean(event.message)}", style="bold red"))
        elif kind == "done":
            self.stop_reason = event.stop_reason
            if event.stop_reason == "cancelled":
                self.console.print(Text("cancelled", style="yellow"))
            elif event.stop_reason == "max_iterations":
                self.console.print(
                    Text(
                        "stopped: the turn reached its limit of model calls "
                        "(HERMES_MAX_ITERATIONS); say 'continue' to go on.",
                        style="yellow",
                    )
                )
            elif event.stop_reason == "max_tokens":
                self.console.print(
                    Text(
                        "cut off: the answer reached the token limit (max_tokens); "
                        "say 'continue' to go on.",
                        style="yellow",
                    )
                )
            elif event.stop_reason == "refusal":
                self.console.print(
                    Text(
                        "the model declined to answer; this exchange stays here but will not "
                        "be sent to the model again.",
                        style="yellow",
                    )
                )

    def close(self) -> None:
        """Finish whatever is still being drawn (safe to call twice)."""
        self._stop_waiting()
        self._end_text()

    def _wait(self, label: str) -> None:
        """A spinner with ``label`` until the next event; terminals only, never in scripts."""
        if not self.markdown:
            return
        self.waiting = self.console.status(Text(label, style="dim"), spinner="dots")
        self.waiting.start()

    def _stop_waiting(self) -> None:
        if self.waiting is not None:
            waiting, self.waiting = self.waiting, None
            waiting.stop()

    def _text(self, delta: str) -> None:
        if not delta:
            return
        self.text_seen = True
        if self.markdown:
            if self.stream is None:
                self.stream = MarkdownStream(self.console)
            self.stream.write(delta)
        else:
            self.console.file.write(delta)
            self.console.file.flush()
            self.at_line_start = delta.endswith("\n")

    def _end_text(self) -> None:
        if self.stream is not None:
            stream, self.stream = self.stream, None
            stream.close()
        if not self.at_line_start:
            self.console.file.write("\n")
            self.console.file.flush()
            self.at_line_start = True


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))
