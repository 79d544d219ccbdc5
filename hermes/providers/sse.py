"""Server-sent events read straight from an HTTP response's lines.

The Anthropic provider reads the raw SSE itself (see ``anthropic.sse_events``).
The SDK's own raw-event reader (``Stream.raw_events``) only exists in recent
releases, so this small reader, following the SSE spec's field rules, keeps
every declared SDK version working.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerSentEvent:
    event: str | None
    data: str


def read_events(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """The events of an SSE body given line by line (line endings already removed)."""
    event: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if data or event is not None:
                yield ServerSentEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue  # a comment: proxies send these as keep-alives
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield ServerSentEvent(event, "\n".join(data))
