"""Small pieces both wire formats share: reading the model's tool arguments."""

from __future__ import annotations

import json
from typing import Any

from hermes.events import ToolCall


def parse_tool_input(name: str, raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse a tool call's JSON arguments; model output is hostile.

    Returns ``(input, None)`` on success, or ``({}, reason)`` when the text is not
    a JSON object, so the loop can tell the model what was wrong instead of
    running the tool.
    """
    if not raw.strip():
        return {}, None  # a tool called with no arguments
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, (
            f"the arguments for {name} were not valid JSON ({exc.msg} at character {exc.pos}): "
            "call the tool again with a JSON object"
        )
    except (ValueError, RecursionError):
        return (
            {},
            f"the arguments for {name} could not be parsed: call the tool again with a JSON object",
        )
    if not isinstance(value, dict):
        return {}, (
            f"the arguments for {name} must be a JSON object, not {type(value).__name__}: "
            "call the tool again with a JSON object"
        )
    return value, None


def tool_call(call_id: str, name: str, raw_arguments: str) -> ToolCall:
    """A ToolCall from streamed pieces, with ``input_error`` set if the arguments are bad."""
    arguments, error = parse_tool_input(name, raw_arguments)
    return ToolCall(id=call_id, name=name, input=arguments, input_error=error)


def tool_result_text(content: str, is_error: bool) -> str:
    """Tool output as sent in formats with no error flag (OpenAI): errors say so."""
    if is_error and not content.lower().startswith("error"):
        return f"Error: {content}"
    return content or "(no output)"
