"""How the fake LLM writes a scripted reply in each wire format.

Shapes follow the real APIs' documented streams: Anthropic's Messages SSE
(``message_start`` ... ``message_stop``, ``input_json_delta`` for tool input)
and OpenAI's Chat Completions chunks (``choices[0].delta``, tool calls by
``index``, an optional final usage chunk, ``[DONE]``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakes.llm_server import Reply

# Script stop reasons use Anthropic's words; OpenAI's equivalents.
# A refusal is "stop" with the text in ``delta.refusal`` (structured refusals).
OPENAI_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "stop",
}

ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
OPENAI_ERRORS = {  # status: (type, code)
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}
DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "model: not found",
    429: "Number of request tokens has exceeded your per-minute rate limit.",
    500: "Internal server error",
    503: "Service unavailable",
    529: "Overloaded",
}


def wire_for_path(path: str) -> str | None:
    path = path.split("?")[0].rstrip("/")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    return None


def sse(data: Any, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def usage_numbers(reply: Reply) -> tuple[int, int, int, int]:
    numbers = tuple(reply.usage or ()) + (0, 0, 0, 0)
    return numbers[0], numbers[1], numbers[2], numbers[3]


def stop_reason(reply: Reply) -> str:
    return reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")


# -- Anthropic ---------------------------------------------------------------
def anthropic_events(reply: Reply, model: str) -> Iterator[bytes]:
    inp, out, cache_read, cache_write = usage_numbers(reply)
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": inp,
            "output_tokens": 1,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        },
    }
    yield sse({"type": "message_start", "message": message}, "message_start")
    yield sse({"type": "ping"}, "ping")
    index = 0
    if reply.text:
        whole = "text_in_start" in reply.quirks
        block = {"type": "text", "text": reply.text if whole else ""}
        yield sse(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
        for piece in [] if whole else pieces(reply.text, reply.chunk_size):
            delta = {"type": "text_delta", "text": piece}
            yield sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    for call_id, name, arguments in reply.calls:
        whole = "input_in_start" in reply.quirks
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        if whole:
            block["input"] = json.loads(arguments)
        if "no_ids" in reply.quirks:
            del block["id"]
        yield sse(
            {"type": "content_block_start", "index": index, "content_block": block},
            "content_block_start",
        )
        for piece in [] if whole else [""] + pieces(arguments, reply.args_chunk_size):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
        yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        index += 1
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(reply), "stop_sequence": None},
    }
    delta["usage"] = {"output_tokens": out}
    yield sse(delta, "message_delta")
    yield sse({"type": "message_stop"}, "message_stop")


def anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    inp, out, cache_read, cache_write = usage_numbers(reply)
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for call_id, name, arguments in reply.calls:
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = {}
        content.append({"type": "tool_use", "id": call_id, "name": name, "input": parsed})
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(reply),
        "stop_sequence": None,
        "usage": {
            "input_tokens": inp,
            "output_tokens": out,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
        },
    }


# -- OpenAI ------------------------------------------------------------------
def openai_usage(reply: Reply) -> dict[str, Any]:
    inp, out, cache_read, _ = usage_numbers(reply)
    # OpenAI counts cached tokens inside prompt_tokens.
    return {
        "prompt_tokens": inp + cache_read,
        "completion_tokens": out,
        "total_tokens": inp + cache_read + out,
        "prompt_tokens_details": {"cached_tokens": cache_read},
    }


def openai_events(reply: Reply, model: str, include_usage: bool) -> Iterator[bytes]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if include_usage:
            data["usage"] = None
        return sse(data)

    yield chunk({"role": "assistant", "content": ""})
    field = "refusal" if stop_reason(reply) == "refusal" else "content"
    for piece in pieces(reply.text, reply.chunk_size):
        yield chunk({field: piece})
    for index, (call_id, name, arguments) in enumerate(reply.calls):
        head = {"index": index, "id": call_id, "type": "function"}
        if "index_zero" in reply.quirks:  # Ollama: every call of a batch says index 0
            head = {"index": 0, "id": call_id, "type": "function"}
        if "no_ids" in reply.quirks:
            head = {"index": index, "type": "function"}
        if "args_object" in reply.quirks:
            function = {"name": name, "arguments": json.loads(arguments)}
            yield chunk({"tool_calls": [{**head, "function": function}]})
            continue
        if reply.tool_call_style == "whole":
            yield chunk(
                {"tool_calls": [{**head, "function": {"name": name, "arguments": arguments}}]}
            )
            continue
        if reply.tool_call_style == "noindex":  # a few compatible servers omit "index"
            head = {"id": call_id, "type": "function"}
        if reply.tool_call_style in ("split", "noindex"):
            yield chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
        for piece in pieces(arguments, reply.args_chunk_size):
            if reply.tool_call_style == "repeat":
                call = {**head, "function": {"name": name, "arguments": piece}}
            elif reply.tool_call_style == "noindex":
                call = {"function": {"arguments": piece}}
            else:
                call = {"index": index, "function": {"arguments": piece}}
            yield chunk({"tool_calls": [call]})
    finish = OPENAI_FINISH.get(stop_reason(reply), stop_reason(reply))
    yield chunk({}, finish)
    if include_usage and reply.usage is not None:
        yield sse(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": openai_usage(reply),
            }
        )
    yield sse("[DONE]")


def openai_completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, name, arguments in reply.calls
        ]
    finish = OPENAI_FINISH.get(stop_reason(reply), stop_reason(reply))
    data: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if reply.usage is not None:
        data["usage"] = openai_usage(reply)
    return data


# -- both ----------------------------------------------------------------------
def complete(wire: str, reply: Reply, model: str) -> dict[str, Any]:
    if wire == "anthropic":
        return anthropic_message(reply, model)
    return openai_completion(reply, model)


def error_body(wire: str, reply: Reply) -> dict[str, Any]:
    message = reply.message or DEFAULT_MESSAGES.get(reply.status, f"HTTP {reply.status}")
    if wire == "anthropic":
        kind = reply.error_type or ANTHROPIC_ERROR_TYPES.get(reply.status, "api_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": "req_fake",
        }
    kind, code = OPENAI_ERRORS.get(reply.status, ("server_error", None))
    return {
        "error": {
            "message": message,
            "type": reply.error_type or kind,
            "param": None,
            "code": reply.code or code,
        }
    }


def invalid_request_body(wire: str, message: str, param: str | None) -> dict[str, Any]:
    """The 400 body each API sends for a request it refuses."""
    if wire == "anthropic":
        return {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": message},
            "request_id": "req_fake",
        }
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    }


def stream_error_frame(wire: str, kind: str) -> bytes:
    message = "Overloaded" if kind == "overloaded_error" else f"fake in-stream {kind}"
    if wire == "anthropic":
        return sse({"type": "error", "error": {"type": kind, "message": message}}, "error")
    return sse({"error": {"message": message, "type": kind, "param": None, "code": None}})


# -- context window (an optional check: FakeLLM.context_window) -----------------
CHARS_PER_TOKEN = 4


def prompt_tokens(body: dict[str, Any]) -> int:
    """The fake's token count of a request: its system, messages and tools as JSON, 4 chars a token.

    Deliberately not our client's estimate, so tests see how the client copes
    with a tokenizer it does not know.
    """
    parts = {key: body.get(key) for key in ("system", "messages", "tools")}
    return math.ceil(len(json.dumps(parts)) / CHARS_PER_TOKEN)


def requested_output(body: dict[str, Any]) -> int:
    value = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    return value if isinstance(value, int) else 0


def context_error(wire: str, prompt: int, output: int, window: int) -> dict[str, Any] | None:
    """The real APIs' 400 body for a request over the window, or None when it fits."""
    if prompt + output <= window:
        return None
    if wire == "anthropic":
        if prompt > window:
            message = f"prompt is too long: {prompt} tokens > {window} maximum"
        else:
            message = (
                f"input length and `max_tokens` exceed context limit: {prompt} + {output} > "
                f"{window}, decrease input length or `max_tokens` and try again"
            )
        return {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": message},
            "request_id": "req_fake",
        }
    return {
        "error": {
            "message": (
                f"This model's maximum context length is {window} tokens. However, you requested "
                f"{prompt + output} tokens ({prompt} in the messages, {output} in the completion). "
                "Please reduce the length of the messages or completion."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
