"""Request validation of the fake LLM: the 400s the real APIs answer to a bad history.

A server that accepts any body lets an invalid history pass every test and
fail only in front of a user. These checks follow what Anthropic's Messages
API and OpenAI's Chat Completions refuse, with their error texts:

- a tool call without a result right after it, and a result that answers no
  call of the message before it (both APIs);
- empty or whitespace-only text blocks, and a first message that is not the
  user's (Anthropic);
- more than 4 ``cache_control`` breakpoints (Anthropic);
- an assistant message with neither content nor tool calls (OpenAI).

Each check returns the error message, or None when the request is valid.
"""

from __future__ import annotations

from typing import Any

MAX_CACHE_BREAKPOINTS = 4


def problem(wire: str, body: Any) -> tuple[str, str | None] | None:
    """``(message, param)`` of the 400 the real API would answer, or None."""
    if not isinstance(body, dict):
        return ("The request body is not valid JSON.", None)
    if wire == "anthropic":
        found = anthropic_problem(body)
        return (found, None) if found else None
    return openai_problem(body)


# -- Anthropic ---------------------------------------------------------------
def anthropic_problem(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    blocks = [_blocks(m.get("content")) if isinstance(m, dict) else [] for m in messages]
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        if i == 0 and message["role"] != "user":
            return 'messages: first message must use the "user" role'
        if not blocks[i] and not (i == len(messages) - 1 and message["role"] == "assistant"):
            return (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for j, block in enumerate(blocks[i]):
            if block.get("type") == "text" and not str(block.get("text") or "").strip():
                return f"messages.{i}.content.{j}.text: text content blocks must contain non-whitespace text"
    for i, message in enumerate(messages):
        uses = [b.get("id") for b in blocks[i] if b.get("type") == "tool_use"]
        if message["role"] == "assistant" and uses:
            following = blocks[i + 1] if i + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block "
                    "must have a corresponding `tool_result` block in the next message."
                )
        if message["role"] == "user":
            previous = blocks[i - 1] if i > 0 and messages[i - 1]["role"] == "assistant" else []
            called = {b.get("id") for b in previous if b.get("type") == "tool_use"}
            for j, block in enumerate(blocks[i]):
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in called:
                    return (
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                        "block must have a corresponding `tool_use` block in the previous message."
                    )
    breakpoints = _count_cache_control(body.get("system")) + _count_cache_control(body.get("tools"))
    breakpoints += sum(_count_cache_control(b) for b in blocks)
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        return (
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {breakpoints}."
        )
    return None


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _count_cache_control(value: Any) -> int:
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    if isinstance(value, dict):
        return 1 if value.get("cache_control") else 0
    return 0


# -- OpenAI ------------------------------------------------------------------
def openai_problem(body: dict[str, Any]) -> tuple[str, str | None] | None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ("[] is too short - 'messages'", "messages")
    waiting: list[str] = []  # tool_call ids of the last assistant message still unanswered
    in_tool_run = False
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not in_tool_run or call_id not in waiting:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{i}].role",
                )
            waiting.remove(call_id)
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}",
                f"messages.[{i}].role",
            )
        in_tool_run = False
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                return (
                    "Invalid value for 'content': expected a string, got null.",
                    f"messages.[{i}].content",
                )
            waiting = [str(c.get("id")) for c in calls if isinstance(c, dict)]
            in_tool_run = bool(waiting)
        elif role not in ("system", "developer", "user"):
            return (
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', "
                "'user', 'tool', 'developer'.",
                f"messages.[{i}].role",
            )
    if waiting:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(waiting)}",
            f"messages.[{len(messages) - 1}].role",
        )
    return None
