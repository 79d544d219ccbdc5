"""The one language the agent core speaks: typed, frozen events.

The turn loop yields these; the CLI prints them, ``--json`` and the web server
write them as NDJSON (``to_wire``), and tests assert them. Providers yield the
subset ``TextDelta``, ``ToolCall``, ``Usage`` and ``StreamEnd``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

# How a turn ended (SPEC's ``done`` row). ``max_tokens``: the answer hit the
# token cap and was cut; ``refusal``: the model declined (kept for the user,
# never replayed to the model); ``interrupted``: the turn's events were closed
# or its process died; ``budget``: a session budget stopped it.
StopReason = Literal[
    "end_turn",
    "max_iterations",
    "max_tokens",
    "refusal",
    "cancelled",
    "interrupted",
    "budget",
    "error",
]
SkillAction = Literal["used", "created", "refined"]


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        """The event's own fields, JSON-ready, with its ``type``."""
        data = {"type": self.type}
        for f in dataclasses.fields(self):
            data[f.name] = getattr(self, f.name)
        return data


@dataclass(frozen=True)
class TurnStart(Event):
    type: ClassVar[str] = "turn_start"
    session_id: int
    user_message_id: int


@dataclass(frozen=True)
class TextDelta(Event):
    type: ClassVar[str] = "text"
    delta: str


@dataclass(frozen=True)
class ToolCall(Event):
    """A tool call the model asked for. Also the shape stored on assistant messages."""

    type: ClassVar[str] = "tool_call"
    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    # Set by a provider when the model's arguments were not a JSON object; the
    # loop answers the model with this instead of running the tool.
    input_error: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True)
class ToolResult(Event):
    type: ClassVar[str] = "tool_result"
    id: str
    name: str
    output: str
    is_error: bool = False
    duration_ms: int = 0


@dataclass(frozen=True)
class SkillEvent(Event):
    type: ClassVar[str] = "skill"
    action: SkillAction
    name: str
    version: int


@dataclass(frozen=True)
class Usage(Event):
    type: ClassVar[str] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        if self.cost_usd is None or other.cost_usd is None:
            cost = None
        else:
            cost = round(self.cost_usd + other.cost_usd, 8)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=cost,
        )


def total_usage(parts: list[Usage]) -> Usage:
    """Add usages up. The cost is known only when every part's is: a turn whose
    server reported nothing, or one part of unknown price, costs ``None``."""
    if not parts:
        return Usage()
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total


@dataclass(frozen=True)
class Compacted(Event):
    """Older messages were summarized in the model's view (all stay stored and searchable)."""

    type: ClassVar[str] = "compaction"
    id: int
    through_message_id: int
    messages_covered: int
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class ErrorEvent(Event):
    type: ClassVar[str] = "error"
    message: str
    retryable: bool = False


@dataclass(frozen=True)
class Done(Event):
    type: ClassVar[str] = "done"
    stop_reason: StopReason
    assistant_message_id: int | None = None


@dataclass(frozen=True)
class StreamEnd(Event):
    """Provider-only: the model finished this response. Never leaves the loop."""

    type: ClassVar[str] = "stream_end"
    stop_reason: str = "end_turn"


def to_wire(seq: int, turn_id: str, event: Event) -> dict[str, Any]:
    """The NDJSON line for an event: ``{"seq", "turn_id", "type", ...fields}``."""
    return {"seq": seq, "turn_id": turn_id, **event.to_dict()}
