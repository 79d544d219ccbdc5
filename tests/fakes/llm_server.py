"""A scripted model server speaking the Anthropic and OpenAI wire formats.

It is a real HTTP server on 127.0.0.1, so the real SDKs talk to it exactly as
they talk to the real APIs: streaming SSE, JSON bodies, error bodies, headers.
It validates each request body like the real APIs do (``llm_validate``):
an invalid history gets the provider's own 400, not a reply.
A test queues replies; each request takes the next one and the server writes
it in the format the request's path asks for (``/v1/messages`` is Anthropic,
``/v1/chat/completions`` is OpenAI), so one script drives both providers::

    fake = FakeLLM().start()
    fake.error(429, retry_after=0)
    fake.reply(text="Hello", tool_calls=[("read_file", {"path": "a.txt"})], usage=(12, 5))
    settings = ProviderSettings(model="claude-sonnet-4-5", api_key="test-key",
                                base_url=fake.base_url("anthropic"))
    ...
    assert fake.requests[-1].json["system"][0]["cache_control"] == {"type": "ephemeral"}
    fake.stop()

Another process can script it over HTTP: ``POST /_fake/script`` with a JSON
list of replies (the keyword arguments of :meth:`FakeLLM.reply`, plus
``status`` for errors), ``GET /_fake/requests``, ``POST /_fake/reset``. Run it
standalone with ``python -m tests.fakes.llm_server --port 8765 --script s.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes import embeddings_wire, llm_validate
from tests.fakes import llm_wire as wf

EXHAUSTED = "fake LLM: script exhausted (no reply queued for this request)"

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1", "openrouter": "gpt-4.1"}


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``status`` other than 200 makes it an error reply.

    ``tool_calls`` holds ``(name, input)`` or ``(name, input, id)``; ``input`` is
    a dict, or a raw string sent verbatim (to test invalid JSON from the model).
    ``usage`` is ``(input, output)`` or ``(input, output, cache_read, cache_write)``;
    ``None`` sends no usage chunk in the OpenAI format.
    """

    text: str = ""
    tool_calls: tuple[tuple[Any, ...], ...] = ()
    usage: tuple[int, ...] | None = (10, 5)
    stop_reason: str | None = None  # Anthropic words; default end_turn / tool_use
    chunk_size: int = 8  # characters of text per delta
    args_chunk_size: int = 6  # characters of tool arguments per delta
    # OpenAI: split | repeat (id+name every chunk) | whole (one chunk) | noindex (no "index")
    tool_call_style: str = "split"
    cut_after: int | None = None  # close the connection after this many SSE events
    cut_clean: bool = False  # end the HTTP body properly when cutting (vs. an abrupt close)
    stall: float | None = None  # go silent this many seconds mid-stream...
    stall_after: int = 2  # ...after this many SSE events
    stream_error: str | None = None  # an in-stream error of this type, e.g. overloaded_error
    stream_error_after: int = 1
    malformed_after: int | None = None  # send a data line that is not JSON, then end
    delay: float = 0.0  # seconds to wait before answering at all
    chunk_delay: float = 0.0  # seconds between two SSE events, like a model generating
    model: str | None = None
    # Error replies.
    status: int = 200
    message: str | None = None
    error_type: str | None = None
    code: str | None = None
    retry_after: float | str | None = None
    raw_body: str | None = None  # sent verbatim as text/html, like a proxy's error page
    # Ways other servers differ from the real APIs, to test leniency:
    # "no_event_names" (Anthropic SSE with data: lines only), "input_in_start" (Anthropic
    # tool input whole in content_block_start), "args_object" (OpenAI arguments as a JSON
    # object, not a string), "no_done" (OpenAI without data: [DONE]), "no_ids" (no call ids),
    # "ignore_stream" (a JSON body even when asked to stream), "text_in_start" (Anthropic
    # text whole in content_block_start, no deltas).
    quirks: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        data = dict(data)
        data["tool_calls"] = tuple(tuple(c) for c in data.get("tool_calls") or ())
        if data.get("usage") is not None:
            data["usage"] = tuple(data["usage"])
        data["quirks"] = tuple(data.get("quirks") or ())
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def calls(self) -> list[tuple[str, str, str]]:
        """``(id, name, arguments-json)`` for each tool call."""
        out = []
        for n, call in enumerate(self.tool_calls):
            name, arguments = call[0], call[1]
            call_id = call[2] if len(call) > 2 else f"toolu_fake_{n}"
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            out.append((call_id, name, arguments))
        return out


@dataclass
class RecordedRequest:
    """A request the fake received: ``json`` is the parsed body (None if not JSON)."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    json: Any
    body: bytes = field(repr=False, default=b"")

    @property
    def wire(self) -> str | None:
        return wf.wire_for_path(self.path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "json": self.json,
        }


class FakeLLM:
    """The scripted server. Use as a context manager or call ``start``/``stop``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self._address = (host, port)
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        # Like the real APIs, refuse invalid histories with a 400 (see llm_validate);
        # the messages of the requests refused so far.
        self.strict = True
        self.rejected: list[str] = []
        self.stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        # Like the real APIs: refuse (400) a request whose prompt plus max_tokens
        # passes this many tokens (counted by llm_wire.prompt_tokens), and report
        # that count as the input tokens of an accepted one. None: no check.
        self.context_window: int | None = None
        # Called with each model request's JSON body; a Reply it returns is served
        # instead of the queue's next one (scripts that depend on the request).
        self.responder: Callable[[dict[str, Any]], Reply | None] | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> FakeLLM:
        server = _Server(self._address, _Handler)
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self._port = server.server_address[1]
        # A short poll interval keeps stop() (and so every test's teardown) quick.
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.02,), name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # wakes handlers sleeping in a stall or delay
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._port is not None, "FakeLLM is not started"
        return self._port  # still known after stop(), to test "connection refused"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, provider: str) -> str:
        """The base URL an SDK needs: Anthropic appends /v1/messages, OpenAI /chat/completions."""
        return self.url if provider == "anthropic" else self.url + "/v1"

    # -- scripting -------------------------------------------------------
    def reply(
        self, text: str = "", *, tool_calls: Iterable[tuple[Any, ...]] = (), **options: Any
    ) -> Reply:
        """Queue a normal answer (see :class:`Reply` for the options)."""
        item = Reply(text=text, tool_calls=tuple(tuple(c) for c in tool_calls), **options)
        return self.add(item)

    def error(
        self,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        code: str | None = None,
        retry_after: float | str | None = None,
        delay: float = 0.0,
        raw_body: str | None = None,
    ) -> Reply:
        """Queue an HTTP error shaped like the real API's, optionally with Retry-After."""
        item = Reply(
            raw_body=raw_body,
            status=status,
            message=message,
            error_type=error_type,
            code=code,
            retry_after=retry_after,
            delay=delay,
        )
        return self.add(item)

    def add(self, item: Reply | dict[str, Any]) -> Reply:
        if isinstance(item, dict):
            item = Reply.from_dict(item)
        with self._lock:
            self._queue.append(item)
        return item

    def script(self, items: Iterable[Reply | dict[str, Any]]) -> None:
        for item in items:
            self.add(item)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.rejected.clear()
            self.requests.clear()

    @property
    def pending(self) -> int:
        """Replies queued and not yet served."""
        with self._lock:
            return len(self._queue)

    @property
    def last_request(self) -> RecordedRequest:
        assert self.requests, "the fake LLM has received no request"
        return self.requests[-1]

    def next_reply(self) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return Reply(status=500, message=EXHAUSTED, error_type="api_error")

    def reply_for(self, body: Any) -> Reply:
        """The responder's answer to this request, else the next scripted reply;
        with a context window set, usage reports the prompt's real size."""
        reply = None
        if self.responder is not None and isinstance(body, dict):
            reply = self.responder(body)
        reply = reply or self.next_reply()
        if self.context_window and reply.status == 200 and isinstance(body, dict):
            output = (tuple(reply.usage or ()) + (0, 0))[1] or 5
            reply = replace(reply, usage=(wf.prompt_tokens(body), output))
        return reply

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    # -- pointing things at it -------------------------------------------
    def env(self, provider: str = "anthropic", *, api_key: str = "test-key") -> dict[str, str]:
        """Environment variables that point a ``hermes`` subprocess at this server."""
        if provider == "anthropic":
            return {
                "HERMES_PROVIDER": "anthropic",
                "ANTHROPIC_BASE_URL": self.base_url(provider),
                "ANTHROPIC_API_KEY": api_key,
            }
        if provider == "openai":
            return {
                "HERMES_PROVIDER": "openai",
                "OPENAI_BASE_URL": self.base_url(provider),
                "OPENAI_API_KEY": api_key,
            }
        if provider == "openrouter":
            return {
                "HERMES_PROVIDER": "openrouter",
                "HERMES_BASE_URL": self.base_url(provider),
                "OPENROUTER_API_KEY": api_key,
            }
        raise ValueError(f"unknown provider {provider!r}")

    def config_overrides(self, provider: str = "anthropic", **extra: Any) -> dict[str, Any]:
        """Keyword arguments for the ``make_config`` fixture."""
        return {
            "provider": provider,
            "model": DEFAULT_MODELS[provider],
            "api_key": "test-key",
            "base_url": self.base_url(provider),
            **extra,
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (timeouts, closed keep-alive connections) are normal here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Cut(Exception):
    """Raised inside a handler to drop the connection mid-stream."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"

    @property
    def fake(self) -> FakeLLM:
        return self.server.fake  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    # -- routing ---------------------------------------------------------
    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/_fake/requests":
            self._json(200, [r.to_dict() for r in self.fake.requests])
        else:
            # Recorded, so tests can see where a client looked (e.g. for a model list).
            headers = {k.lower(): v for k, v in self.headers.items()}
            self.fake.record(RecordedRequest("GET", self.path, headers, None))
            self._json(404, {"error": {"message": f"fake LLM: no route for GET {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?")[0]
        if path == "/_fake/script":
            items = body if isinstance(body, list) else [body]
            try:
                replies = [Reply.from_dict(item) for item in items]
            except (TypeError, ValueError) as exc:
                self._json(400, {"error": {"message": f"fake LLM: bad script entry: {exc}"}})
                return
            self.fake.script(replies)
            self._json(200, {"queued": self.fake.pending})
            return
        if path == "/_fake/reset":
            self.fake.reset()
            self._json(200, {"ok": True})
            return

        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake.record(RecordedRequest("POST", self.path, headers, body, raw))
        if path.endswith("/embeddings"):
            # Recall: deterministic vectors, no script needed (see embeddings_wire.py).
            self._json(*embeddings_wire.respond(body))
            return
        wire = wf.wire_for_path(path)
        if wire is None:
            self._json(404, {"error": {"message": f"fake LLM: no route for POST {self.path}"}})
            return
        if self.fake.strict:
            found = llm_validate.problem(wire, body)
            if found is not None:
                # Refused like the real API refuses it; the scripted reply stays queued.
                message, param = found
                self.fake.rejected.append(message)
                self._json(400, wf.invalid_request_body(wire, message, param))
                return
        if self._refused_as_too_long(wire, body):
            return
        reply = self.fake.reply_for(body)
        if reply.delay and self.fake.stopping.wait(reply.delay):
            return
        if reply.status != 200:
            self._error(wire, reply)
        elif isinstance(body, dict) and body.get("stream") and "ignore_stream" not in reply.quirks:
            self._stream(wire, reply, body)
        else:
            model = reply.model or (body or {}).get("model") or "fake-model"
            self._json(200, wf.complete(wire, reply, model))

    def _refused_as_too_long(self, wire: str, body: Any) -> bool:
        window = self.fake.context_window
        if not window or not isinstance(body, dict):
            return False
        prompt, output = wf.prompt_tokens(body), wf.requested_output(body)
        error = wf.context_error(wire, prompt, output, window)
        if error is not None:
            self._json(400, error, {"request-id": "req_fake"})
        return error is not None

    # -- responses -------------------------------------------------------
    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, wire: str, reply: Reply) -> None:
        headers = {"request-id": "req_fake"}
        if reply.retry_after is not None:
            headers["Retry-After"] = str(reply.retry_after)
        if reply.raw_body is not None:
            data = reply.raw_body.encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self._json(reply.status, wf.error_body(wire, reply), headers)

    def _stream(self, wire: str, reply: Reply, body: dict[str, Any]) -> None:
        model = reply.model or body.get("model") or "fake-model"
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for n, frame in enumerate(self._frames(wire, reply, model, include_usage)):
                if reply.cut_after is not None and n >= reply.cut_after:
                    raise _Cut
                if reply.chunk_delay and n and self.fake.stopping.wait(reply.chunk_delay):
                    raise _Cut
                if reply.stall is not None and n == reply.stall_after:
                    self.wfile.flush()
                    if self.fake.stopping.wait(reply.stall):
                        raise _Cut
                self._chunk(frame)
            self._chunk(b"")  # the zero-length chunk ends the body
        except _Cut:
            if reply.cut_clean:
                self._chunk(b"")
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client hung up (a timeout, a cancel)

    def _frames(self, wire: str, reply: Reply, model: str, include_usage: bool) -> Iterator[bytes]:
        if wire == "anthropic":
            events = wf.anthropic_events(reply, model)
        else:
            events = wf.openai_events(reply, model, include_usage)
        for n, frame in enumerate(_quirky(events, reply.quirks)):
            if n == reply.malformed_after:
                yield b'event: content_block_delta\ndata: {"type": "content_block_delta", "ind\n\n'
                return
            if reply.stream_error and n == reply.stream_error_after:
                yield from _quirky([wf.stream_error_frame(wire, reply.stream_error)], reply.quirks)
                return  # the real API ends the body cleanly after an error event
            yield frame

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _quirky(frames: Iterable[bytes], quirks: tuple[str, ...]) -> Iterator[bytes]:
    """The frames as a looser server would send them."""
    for frame in frames:
        if "no_event_names" in quirks:
            frame = b"".join(x for x in frame.splitlines(True) if not x.startswith(b"event:"))
        if "no_done" in quirks and frame.startswith(b"data: [DONE]"):
            continue
        yield frame


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the scripted fake LLM server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", help="JSON file: a list of replies to queue")
    args = parser.parse_args(argv)
    fake = FakeLLM(args.host, args.port).start()
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            fake.script(json.load(f))
    print(f"fake LLM listening on {fake.url} ({fake.pending} replies queued)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
