"""Anthropic's Messages API, streamed.

The SDK is imported inside methods so that ``hermes --help`` never pays for
it. The SDK's own retries are off: :mod:`hermes.providers.retry` decides.

Prompt caching: the system prompt, the tool definitions and the conversation
so far are a stable prefix between calls of one turn and between turns, so we
mark the system block, the last tool and the last message block with
``cache_control``; each call then reads what the previous one wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from hermes.config import DEFAULT_MODELS, KEY_VARIABLES
from hermes.errors import ProviderError
from hermes.events import StreamEnd, TextDelta, ToolCall, Usage
from hermes.messages import Message, ModelRequest, ToolSpec
from hermes.providers.base import Chunk, Provider, ProviderSettings
from hermes.providers.convert import tool_call
from hermes.providers.pricing import priced
from hermes.providers.retry import (
    ProviderFailure,
    Target,
    retrying,
    stream_failure,
    target_for,
    translate,
    transport_errors,
)
from hermes.providers.sse import read_events as read_sse

EPHEMERAL = {"type": "ephemeral"}
# Anthropic's stop reasons, in the loop's words.
STOP_REASONS = {
    "stop_sequence": "end_turn",
    # The answer hit the context window: cut like max_tokens (a tool call in it is unfinished).
    "model_context_window_exceeded": "max_tokens",
}
EMPTY_SCHEMA = {"type": "object", "properties": {}}


class AnthropicProvider(Provider):
    """Claude models through the Anthropic Messages API (or a server that speaks it)."""

    name = "anthropic"
    default_model = DEFAULT_MODELS["anthropic"]
    key_variable = KEY_VARIABLES["anthropic"]

    def __init__(self, settings: ProviderSettings):
        super().__init__(settings)
        self._client: Any = None
        self._target: Target = target_for(
            settings,
            label="the Anthropic API",
            key_variable=KEY_VARIABLES["anthropic"],
            default_base_url="https://api.anthropic.com",
        )

    def stream(self, request: ModelRequest) -> Iterator[Chunk]:
        """Stream one response, retrying failures that happen before any output."""
        return retrying(self.settings, lambda: self._attempt(request))

    def client(self) -> Any:
        """The SDK client, built on first use."""
        if self._client is None:
            import anthropic

            s = self.settings
            self._client = anthropic.Anthropic(
                api_key=s.api_key or "not-needed",
                base_url=sdk_base_url(s.base_url),
                max_retries=0,
                # The read timeout bounds the silence between two chunks of a stream.
                timeout=anthropic.Timeout(s.stream_timeout, connect=s.connect_timeout),
            )
        return self._client

    def _attempt(self, request: ModelRequest) -> Iterator[Chunk]:
        import anthropic

        target = replace(self._target, model=request.model)
        timeouts, transports = transport_errors()
        try:
            stream = self.client().messages.create(**request_params(request), stream=True)
        except (anthropic.APIError, *transports) as exc:
            raise _failure(exc, target, streaming=False) from exc
        with stream:
            counts = _zero_counts()
            try:
                yield from read_events(sse_events(stream.response, target), request.model, counts)
            except ProviderError as failure:  # an error event, or the stream ended early
                failure.spent = _billed(counts, request.model)
                raise
            except (anthropic.APIError, json.JSONDecodeError, *timeouts, *transports) as exc:
                failure = _failure(exc, target, streaming=True)
                if isinstance(failure, ProviderError):
                    failure.spent = _billed(counts, request.model)
                raise failure from exc


def sdk_base_url(base_url: str | None) -> str | None:
    """The base URL as the SDK wants it: without the ``/v1`` it appends itself.

    ``http://host:8080/v1`` is how OpenAI-style URLs are written and a common
    way to give this one too; passed on as it is, requests would go to
    ``/v1/v1/messages``.
    """
    if not base_url:
        return None
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _failure(exc: BaseException, target: Target, *, streaming: bool) -> BaseException:
    import anthropic

    return translate(exc, anthropic, target, streaming=streaming) or exc


def request_params(request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments for ``messages.create`` (the JSON body the API receives)."""
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": convert_messages(request.messages),
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": EPHEMERAL}]
    if request.tools:
        params["tools"] = convert_tools(request.tools)
    return params


def convert_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    out = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters or EMPTY_SCHEMA}
        for t in tools
    ]
    if out:
        out[-1]["cache_control"] = EPHEMERAL
    return out


def convert_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Anthropic's alternating user/assistant list.

    Tool results travel as ``tool_result`` blocks in a user message, so a run of
    tool messages (and anything else with the same role in a row) merges into
    one message. Empty text blocks are left out: the API rejects them.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if out:
        last = out[-1]["content"]
        last[-1] = {**last[-1], "cache_control": EPHEMERAL}
    return out


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": m.tool_call_id or "",
                "content": m.content or "(no output)",
                "is_error": m.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = []
    # Whitespace-only text blocks are refused by the API; a model may well have sent one.
    if m.role == "user" and m.context and m.context.strip():
        blocks.append({"type": "text", "text": m.context})
    if m.content.strip():
        blocks.append({"type": "text", "text": m.content})
    if m.role == "assistant":
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in m.tool_calls
        )
    return blocks


def sse_events(response: Any, target: Target) -> Iterator[dict[str, Any]]:
    """The stream's events as dicts, each named by its own ``type`` field.

    Read from the raw SSE rather than through the SDK's stream, which drops
    every event that lacks an ``event:`` line; some compatible servers and
    proxies send ``data:`` lines only. An error event becomes a ProviderFailure.
    """
    if "json" in response.headers.get("content-type", ""):
        # A server that ignored "stream": true and sent the whole message at once.
        yield from message_events(json.loads(response.read()), target)
        return
    for sse in read_sse(response.iter_lines()):
        data = sse.data
        if not data.strip() or data.startswith("[DONE]"):
            continue  # keep-alives, and the OpenAI-style end marker a proxy may add
        event = json.loads(data)
        if not isinstance(event, dict):
            continue
        if sse.event == "error" or event.get("type") == "error":
            raise stream_failure(event, target)
        yield event


def message_events(message: Any, target: Target) -> Iterator[dict[str, Any]]:
    """A complete (non-streamed) message as the stream events that would have carried it."""
    if not isinstance(message, dict) or message.get("type") == "error":
        raise stream_failure(message, target)
    usage = _dict(message.get("usage"))
    yield {"type": "message_start", "message": {"usage": usage}}
    for index, block in enumerate(message.get("content") or ()):
        yield {"type": "content_block_start", "index": index, "content_block": block}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message.get("stop_reason")},
        "usage": usage,
    }
    yield {"type": "message_stop"}


def _zero_counts() -> dict[str, int]:
    return {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}


def _usage(counts: dict[str, int]) -> Usage:
    return Usage(
        input_tokens=counts["input"],
        output_tokens=counts["output"],
        cache_read_tokens=counts["cache_read"],
        cache_write_tokens=counts["cache_write"],
    )


def _billed(counts: dict[str, int], model: str) -> Usage | None:
    """What a stream that failed was billed for: its input once message_start was out."""
    return priced(model, _usage(counts)) if any(counts.values()) else None


def read_events(
    events: Iterator[dict[str, Any]], model: str, counts: dict[str, int] | None = None
) -> Iterator[Chunk]:
    """Turn the stream's events into chunks, adding the reported tokens up in ``counts``.

    Raises a retryable ProviderFailure when the stream ends before
    ``message_stop`` (a proxy or server that closed the connection early).
    """
    # index -> (id, name, input given whole in content_block_start, input_json pieces)
    tools: dict[Any, tuple[str, str, dict[str, Any], list[str]]] = {}
    counts = _zero_counts() if counts is None else counts
    stop_reason = "end_turn"
    finished = False
    for event in events:
        # Every field is checked: a compatible server may send odd shapes.
        kind = event.get("type")
        index = event.get("index")
        if kind == "message_start":
            _count(counts, _dict(_dict(event.get("message")).get("usage")))
        elif kind == "content_block_start":
            block = _dict(event.get("content_block"))
            text = block.get("text")
            if block.get("type") == "text" and isinstance(text, str) and text:
                yield TextDelta(text)  # the real API starts empty; others may not
            elif block.get("type") == "tool_use":
                tools[index] = (
                    _str(block.get("id")),
                    _str(block.get("name")),
                    _dict(block.get("input")),
                    [],
                )
        elif kind == "content_block_delta":
            delta = _dict(event.get("delta"))
            text = delta.get("text")
            if delta.get("type") == "text_delta" and isinstance(text, str) and text:
                yield TextDelta(text)
            elif delta.get("type") == "input_json_delta" and index in tools:
                tools[index][3].append(_str(delta.get("partial_json")))
        elif kind == "content_block_stop" and index in tools:
            call_id, name, whole, parts = tools.pop(index)
            raw = "".join(parts)
            if not raw.strip() and whole:
                yield ToolCall(id=call_id, name=name, input=whole)
            else:
                yield tool_call(call_id, name, raw)
        elif kind == "message_delta":
            reason = _dict(event.get("delta")).get("stop_reason")
            if isinstance(reason, str) and reason:
                stop_reason = STOP_REASONS.get(reason, reason)
            _count(counts, _dict(event.get("usage")))
        elif kind == "message_stop":
            finished = True
            break
    if not finished:
        raise ProviderFailure("the model stream ended early: try again", retryable=True)
    usage = _usage(counts)
    yield priced(model, usage)
    yield StreamEnd(stop_reason=stop_reason)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(counts: dict[str, int], usage: dict[str, Any]) -> None:
    """Take the counts ``usage`` has; message_delta's are cumulative, so later wins."""
    fields = {
        "input": "input_tokens",
        "output": "output_tokens",
        "cache_read": "cache_read_input_tokens",
        "cache_write": "cache_creation_input_tokens",
    }
    for key, attr in fields.items():
        value = usage.get(attr)
        if isinstance(value, int) and value >= 0:
            counts[key] = value
