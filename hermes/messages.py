"""Provider-neutral conversation value types.

Rows and ids belong to the store; these are what the loop and the providers
pass around.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from hermes.events import ToolCall

Role = Literal["user", "assistant", "tool"]

# Appended to an answer that stopped before it was complete (cancelled, cut
# off, its process killed). Stored in the text, so the user sees it and the
# model, reading the history on the next turn, knows the answer was cut.
INTERRUPTED_MARK = "[interrupted]"
# The result given to a tool call that never got one (its turn died while the
# tool ran), so the history stays valid for the provider.
TOOL_INTERRUPTED = "interrupted: the tool did not finish"


def mark_interrupted(text: str) -> str:
    """``text`` with the interrupted mark at its end (once)."""
    text = text.rstrip()
    if text.endswith(INTERRUPTED_MARK):
        return text
    return f"{text}\n\n{INTERRUPTED_MARK}" if text else INTERRUPTED_MARK


@dataclass(frozen=True)
class Message:
    """One message of a conversation as the model sees it.

    ``context`` is per-turn text sent to the model ahead of a user message (the
    skills index relevant to it); it is stored so that replaying the history
    later sends exactly the same bytes, keeping provider prompt caches warm,
    but it is never shown or searched.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    context: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about one tool."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelRequest:
    """One call to a model: everything a provider needs, nothing it doesn't."""

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192


def valid_text(text: str) -> str:
    """``text`` with lone surrogates replaced, so it can be stored, sent and printed.

    They come from file names that are not UTF-8 (``os.listdir`` escapes the
    bad bytes), from command-line bytes, and from ``\\udXXX`` escapes in model
    JSON; SQLite, the SDKs and the terminal all refuse them.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="replace").decode("utf-8")
    return text


def valid_value(value: Any) -> Any:
    """:func:`valid_text` applied to every string inside a JSON-like value."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_text(str(k)): valid_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_value(v) for v in value]
    return value
