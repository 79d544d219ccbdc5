"""OpenAI Chat Completions, streamed: OpenAI itself, OpenRouter, and any
OpenAI-compatible server (Ollama, LM Studio, vLLM, llama.cpp) via a base URL.

Compatible servers differ in the details, so the reader is lenient:
- tool-call arguments arrive split across many chunks and are assembled by
  ``index``; some servers repeat ``id`` and ``name`` in every chunk, some send
  them once, some send the whole call in one chunk, a few omit ``index``;
- usage comes in a final chunk only if the server honours
  ``stream_options.include_usage``. A server that sends none yields no
  ``Usage`` chunk at all: unknown is not the same as zero.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from hermes.config import DEFAULT_MODELS, KEY_VARIABLES, OPENROUTER_BASE_URL
from hermes.events import StreamEnd, TextDelta, Usage
from hermes.messages import Message, ModelRequest, ToolSpec
from hermes.providers.base import Chunk, Provider, ProviderSettings
from hermes.providers.convert import tool_call, tool_result_text
from hermes.providers.pricing import cost
from hermes.providers.retry import (
    ProviderFailure,
    Target,
    retrying,
    stream_failure,
    target_for,
    translate,
    transport_errors,
)

FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
EMPTY_SCHEMA = {"type": "object", "properties": {}}


class OpenAIProvider(Provider):
    """OpenAI's Chat Completions API, or any server that speaks it."""

    name = "openai"
    default_model = DEFAULT_MODELS["openai"]
    key_variable = KEY_VARIABLES["openai"]
    label: ClassVar[str] = "the OpenAI API"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    headers: ClassVar[dict[str, str]] = {}

    def __init__(self, settings: ProviderSettings):
        super().__init__(settings)
        self._client: Any = None
        self._target: Target = target_for(
            settings,
            label=self.label,
            key_variable=KEY_VARIABLES[self.name],
            default_base_url=self.default_base_url,
            api_prefix="/v1",
        )

    def stream(self, request: ModelRequest) -> Iterator[Chunk]:
        """Stream one response, retrying failures that happen before any output."""
        return retrying(self.settings, lambda: self._attempt(request))

    def client(self) -> Any:
        """The SDK client, built on first use."""
        if self._client is None:
            import openai

            s = self.settings
            self._client = openai.OpenAI(
                api_key=s.api_key or "not-needed",
                base_url=s.base_url or self.default_base_url,
                max_retries=0,
                # The read timeout bounds the silence between two chunks of a stream.
                timeout=openai.Timeout(s.stream_timeout, connect=s.connect_timeout),
                default_headers=self.headers or None,
            )
        return self._client

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for ``chat.completions.create``."""
        params: dict[str, Any] = {
            "model": request.model,
            "messages": convert_messages(request.system, request.messages),
            self.max_tokens_field(): request.max_tokens,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = convert_tools(request.tools)
        return params

    def max_tokens_field(self) -> str:
        """The name of the token cap the server reads.

        OpenAI's own API wants ``max_completion_tokens`` (its reasoning models
        refuse ``max_tokens``); Ollama, vLLM, llama.cpp and LM Studio read only
        ``max_tokens`` and silently ignore the other, which would mean no cap.
        """
        return "max_completion_tokens" if is_openai_api(self.settings.base_url) else "max_tokens"

    def usage(self, model: str, raw: Any) -> Usage | None:
        return read_usage(model, raw)

    def _attempt(self, request: ModelRequest) -> Iterator[Chunk]:
        import openai

        target = replace(self._target, model=request.model)
        timeouts, transports = transport_errors()
        try:
            stream = self.client().chat.completions.create(
                **self.request_params(request), stream=True
            )
        except (openai.APIError, *transports) as exc:
            raise _failure(exc, target, streaming=False) from exc
        with stream:
            try:
                chunks = stream
                if "json" in stream.response.headers.get("content-type", ""):
                    # A server that ignored "stream": true and sent the whole answer at once.
                    chunks = [completion_as_chunk(json.loads(stream.response.read()), target)]
                yield from self._read(chunks, request.model)
            except (openai.APIError, json.JSONDecodeError, *timeouts, *transports) as exc:
                raise _failure(exc, target, streaming=True) from exc

    def _read(self, chunks: Any, model: str) -> Iterator[Chunk]:
        """Turn the SDK's chunks into our chunks.

        A stream that ends without any ``finish_reason`` was cut off: raise a
        retryable ProviderFailure rather than pass off half an answer as whole.
        """
        calls = _ToolCalls()
        finish: str | None = None
        refused = False
        usage: Usage | None = None
        for chunk in chunks:
            if getattr(chunk, "usage", None) is not None:
                usage = self.usage(model, chunk.usage)
            for choice in getattr(chunk, "choices", None) or ():
                if getattr(choice, "index", 0) not in (0, None):
                    continue  # we ask for one choice; ignore any others
                # getattr: compatible servers send odd shapes, unvalidated by the SDK.
                delta = getattr(choice, "delta", None)
                content = getattr(delta, "content", None)
                if isinstance(content, str) and content:
                    yield TextDelta(content)
                # The model declining: its words come in ``refusal``, not ``content``.
                refusal = getattr(delta, "refusal", None)
                if isinstance(refusal, str) and refusal:
                    refused = True
                    yield TextDelta(refusal)
                for piece in getattr(delta, "tool_calls", None) or ():
                    calls.add(piece)
                reason = getattr(choice, "finish_reason", None)
                if isinstance(reason, str) and reason:
                    finish = reason
        if finish is None:
            raise ProviderFailure("the model stream ended early: try again", retryable=True)
        yield from calls.finished()
        if usage is not None:
            yield usage
        reason = "refusal" if refused else FINISH_REASONS.get(finish, finish)
        if calls and reason == "end_turn":
            reason = "tool_use"  # some local servers say "stop" after tool calls
        yield StreamEnd(stop_reason=reason)


class OpenRouterProvider(OpenAIProvider):
    """OpenRouter: the OpenAI format, with its attribution header and usage accounting."""

    name = "openrouter"
    default_model = DEFAULT_MODELS["openrouter"]
    key_variable = KEY_VARIABLES["openrouter"]
    label = "OpenRouter"
    default_base_url = OPENROUTER_BASE_URL
    headers = {"X-Title": "Hermes"}

    def max_tokens_field(self) -> str:
        return "max_tokens"  # what OpenRouter documents, for every model behind it

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        params = super().request_params(request)
        # Ask for usage with the actual cost OpenRouter charged.
        params["extra_body"] = {"usage": {"include": True}}
        return params

    def usage(self, model: str, raw: Any) -> Usage | None:
        usage = read_usage(model, raw)
        charged = getattr(raw, "cost", None)
        if usage is not None and isinstance(charged, int | float) and charged >= 0:
            usage = replace(usage, cost_usd=round(float(charged), 8))
        return usage


def is_openai_api(base_url: str | None) -> bool:
    """True for OpenAI's own API (no base URL, or one on api.openai.com)."""
    if not base_url:
        return True
    return (urlsplit(base_url).hostname or "").lower() == "api.openai.com"


def _failure(exc: BaseException, target: Target, *, streaming: bool) -> BaseException:
    import openai

    return translate(exc, openai, target, streaming=streaming) or exc


def completion_as_chunk(data: Any, target: Target) -> Any:
    """A complete chat.completion as one stream chunk, readable by ``_read``."""
    if not isinstance(data, dict) or "error" in data:
        raise stream_failure(data, target)
    choices = []
    for choice in data.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        calls = [
            {**call, "index": i}
            for i, call in enumerate(message.get("tool_calls") or ())
            if isinstance(call, dict)
        ]
        delta = {"content": message.get("content"), "tool_calls": calls}
        choices.append(
            {
                "index": choice.get("index", 0),
                "delta": delta,
                "finish_reason": choice.get("finish_reason"),
            }
        )
    chunk = {"choices": choices, "usage": data.get("usage")}
    # Attribute access, like the SDK's objects.
    return json.loads(json.dumps(chunk), object_hook=lambda d: SimpleNamespace(**d))


def convert_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters or EMPTY_SCHEMA,
            },
        }
        for t in tools
    ]


def convert_messages(system: str, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The chat list: system first, the user's context ahead of their text, tool results by id."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m.role == "user":
            text = "\n\n".join(part for part in (m.context, m.content) if part)
            out.append({"role": "user", "content": text})
        elif m.role == "tool":
            content = tool_result_text(m.content, m.is_error)
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": content})
        elif m.content or m.tool_calls:
            message: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                message["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.input)},
                    }
                    for c in m.tool_calls
                ]
            out.append(message)
    return out


def read_usage(model: str, raw: Any) -> Usage | None:
    """Our Usage from OpenAI's: ``prompt_tokens`` includes cached tokens, ours don't."""
    prompt = _count(getattr(raw, "prompt_tokens", None))
    output = _count(getattr(raw, "completion_tokens", None))
    details = getattr(raw, "prompt_tokens_details", None)
    cache_read = _count(getattr(details, "cached_tokens", None))
    cache_write = _count(getattr(details, "cache_write_tokens", None))
    usage = Usage(
        input_tokens=max(0, prompt - cache_read - cache_write),
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
    return replace(usage, cost_usd=cost(model, usage))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ToolCalls:
    """Tool-call pieces assembled by index, however the server splits them."""

    def __init__(self) -> None:
        self.calls: dict[int, _Call] = {}  # by order of arrival
        self._slots: dict[int, int] = {}  # the server's index -> its call in ``calls``

    def __bool__(self) -> bool:
        return bool(self.calls)

    def add(self, piece: Any) -> None:
        function = getattr(piece, "function", None)
        name = _text(getattr(function, "name", None))
        call_id = _text(getattr(piece, "id", None))
        call = self.calls.setdefault(self._index(piece, call_id, name), _Call())
        if call_id and not call.id:
            call.id = call_id
        # Servers that repeat the name in every chunk repeat all of it: keep the first.
        if name and not call.name:
            call.name = name
        arguments = getattr(function, "arguments", None)
        if isinstance(arguments, dict):
            # A few servers send the arguments already parsed, not as JSON text.
            arguments = json.dumps(arguments)
        arguments = _text(arguments)
        if arguments:
            call.arguments.append(arguments)

    def _index(self, piece: Any, call_id: str, name: str) -> int:
        index = getattr(piece, "index", None)
        if isinstance(index, int):
            # Ollama gives every call of a batch index 0: a new id on a taken index is a
            # new call, and later pieces of that index continue it.
            slot = self._slots.get(index)
            if slot is None or (call_id and self.calls[slot].id not in ("", call_id)):
                slot = self._slots[index] = max(self.calls, default=-1) + 1
            return slot
        # No index: a known id continues its call, a new id or name starts one,
        # a bare argument piece continues the last call.
        for known, call in self.calls.items():
            if call_id and call.id == call_id:
                return known
        if call_id or name or not self.calls:
            return max(self.calls, default=-1) + 1
        return max(self.calls)

    def finished(self) -> Iterator[Chunk]:
        for index in sorted(self.calls):
            call = self.calls[index]
            call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
            yield tool_call(call_id, call.name, "".join(call.arguments))
