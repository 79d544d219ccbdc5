"""The fake LLM server itself: wire shapes, scripting, control endpoints, standalone mode."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path

import anthropic
import openai
import pytest

from tests.fakes.llm_server import EXHAUSTED, FakeLLM

ROOT = Path(__file__).resolve().parent.parent


def post(fake: FakeLLM, path: str, body: object) -> tuple[int, dict[str, str], bytes]:
    """POST ``body``; a model request without a history gets a minimal valid one."""
    if isinstance(body, dict) and path.endswith(("/messages", "/chat/completions")):
        body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 64, **body}
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    headers = {k.lower(): v for k, v in response.getheaders()}
    conn.close()
    return response.status, headers, data


def sse_events(data: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) pairs of an SSE body."""
    events = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        name, payload = None, ""
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                payload = line[len("data: ") :]
        events.append((name, payload))
    return events


def test_anthropic_stream_has_the_real_event_sequence(fake_llm):
    fake_llm.reply("Hello", tool_calls=[("read_file", {"path": "a.txt"})], chunk_size=2)
    status, headers, data = post(fake_llm, "/v1/messages", {"model": "m", "stream": True})
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    names = [name for name, _ in sse_events(data)]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        *["content_block_delta"] * 3,  # He, ll, o
        "content_block_stop",
        "content_block_start",
        *["content_block_delta"] * 4,  # "" then 3 pieces of '{"path": "a.txt"}'
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    pieces = [
        json.loads(d)["delta"]["partial_json"]
        for n, d in sse_events(data)
        if n == "content_block_delta" and "partial_json" in d
    ]
    assert "".join(pieces) == '{"path": "a.txt"}'


def test_openai_usage_chunk_only_when_asked(fake_llm):
    fake_llm.reply("Hi", usage=(3, 2))
    fake_llm.reply("Hi", usage=(3, 2))
    fake_llm.reply("Hi", usage=None)
    asked = {"model": "m", "stream": True, "stream_options": {"include_usage": True}}
    with_usage = sse_events(post(fake_llm, "/v1/chat/completions", asked)[2])
    without = sse_events(post(fake_llm, "/chat/completions", {"model": "m", "stream": True})[2])
    none_configured = sse_events(post(fake_llm, "/v1/chat/completions", asked)[2])

    assert with_usage[-1] == (None, "[DONE]")
    assert json.loads(with_usage[-2][1])["usage"]["prompt_tokens"] == 3
    assert all("usage" not in json.loads(d) for _, d in without[:-1])
    assert all(json.loads(d).get("usage") is None for _, d in none_configured[:-1])


def test_errors_look_like_each_api(fake_llm):
    fake_llm.error(429, retry_after=7)
    fake_llm.error(429, retry_after=7)
    status, headers, data = post(fake_llm, "/v1/messages", {"model": "m"})
    assert status == 429 and headers["retry-after"] == "7"
    assert json.loads(data)["type"] == "error"
    assert json.loads(data)["error"]["type"] == "rate_limit_error"
    status, headers, data = post(fake_llm, "/v1/chat/completions", {"model": "m"})
    assert status == 429
    assert json.loads(data)["error"]["code"] == "rate_limit_exceeded"


def test_empty_script_is_a_loud_500(fake_llm):
    status, _, data = post(fake_llm, "/v1/messages", {"model": "m"})
    assert status == 500
    assert json.loads(data)["error"]["message"] == EXHAUSTED


def test_non_streaming_replies_work_with_the_real_sdks(fake_llm):
    fake_llm.reply("Hi there", tool_calls=[("list_dir", {"path": "."})], usage=(4, 2, 1, 0))
    fake_llm.reply("Hi there", tool_calls=[("list_dir", {"path": "."})], usage=(4, 2, 1, 0))
    a = anthropic.Anthropic(api_key="k", base_url=fake_llm.base_url("anthropic"), max_retries=0)
    message = a.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
    )
    assert message.content[0].text == "Hi there"
    assert message.content[1].input == {"path": "."}
    assert message.usage.cache_read_input_tokens == 1
    o = openai.OpenAI(api_key="k", base_url=fake_llm.base_url("openai"), max_retries=0)
    completion = o.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert completion.choices[0].message.tool_calls[0].function.name == "list_dir"
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage.prompt_tokens == 5


def test_requests_are_recorded_with_headers(fake_llm):
    fake_llm.reply("ok")
    a = anthropic.Anthropic(api_key="secret-k", base_url=fake_llm.url, max_retries=0)
    a.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    request = fake_llm.last_request
    assert request.path == "/v1/messages"
    assert request.wire == "anthropic"
    # This SDK generation sends the key as a bearer token; older ones as x-api-key.
    sent = request.headers.get("x-api-key") or request.headers["authorization"]
    assert sent.endswith("secret-k")
    assert request.json["messages"] == [{"role": "user", "content": "hi"}]
    assert fake_llm.pending == 0


def test_control_endpoints_script_and_report(fake_llm):
    status, _, data = post(fake_llm, "/_fake/script", [{"text": "one"}, {"status": 503}])
    assert status == 200 and json.loads(data) == {"queued": 2}
    post(fake_llm, "/v1/messages", {"model": "m"})
    status, _, data = post(fake_llm, "/v1/messages", {"model": "m"})
    assert status == 503
    conn = http.client.HTTPConnection("127.0.0.1", fake_llm.port, timeout=5)
    conn.request("GET", "/_fake/requests")
    recorded = json.loads(conn.getresponse().read())
    assert [r["path"] for r in recorded] == ["/v1/messages", "/v1/messages"]
    status, _, data = post(fake_llm, "/_fake/script", [{"txet": "typo"}])
    assert status == 400 and b"txet" in data


def test_env_and_config_helpers_point_at_the_server(fake_llm, make_config):
    from hermes.config import Config

    for provider in ("anthropic", "openai", "openrouter"):
        config = Config.from_env({"HERMES_HOME": "/tmp/x", **fake_llm.env(provider)}, dotenv=False)
        assert config.provider == provider
        assert config.base_url == fake_llm.base_url(provider)
        assert config.api_key == "test-key"
        made = make_config(**fake_llm.config_overrides(provider))
        assert (made.provider, made.base_url) == (provider, fake_llm.base_url(provider))


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_unknown_path_is_404_and_does_not_use_the_script(fake_llm, wire):
    fake_llm.reply("kept")
    status, _, _ = post(fake_llm, "/v2/other", {})
    assert status == 404
    assert fake_llm.pending == 1


def test_standalone_server_can_be_scripted_from_a_file(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from a file", "usage": [1, 1]}]))
    fake = FakeLLM().start()  # only to borrow a free port
    port = fake.port
    fake.stop()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.fakes.llm_server", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--script", str(script)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "listening" in process.stdout.readline()
        client = openai.OpenAI(api_key="k", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
        completion = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert completion.choices[0].message.content == "from a file"
    finally:
        process.terminate()
        process.wait(timeout=5)


# -- the server refuses what the real APIs refuse ---------------------------------

TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "list_dir", "input": {}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}
OPENAI_CALL = {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}

ANTHROPIC_INVALID = {
    "tool call without a result": (
        [
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": [TOOL_USE]},
            {"role": "user", "content": "and?"},
        ],
        "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
    ),
    "result without a call": (
        [
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [TOOL_RESULT]},
        ],
        "unexpected `tool_use_id` found in `tool_result` blocks: toolu_1",
    ),
    "empty text block": (
        [{"role": "user", "content": [{"type": "text", "text": "  "}]}],
        "text content blocks must contain non-whitespace text",
    ),
    "five cache breakpoints": (
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": str(n), "cache_control": {"type": "ephemeral"}}
                    for n in range(5)
                ],
            }
        ],
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
}

OPENAI_INVALID = {
    "tool call without a result": (
        [
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": None, "tool_calls": [OPENAI_CALL]},
            {"role": "user", "content": "and?"},
        ],
        "The following tool_call_ids did not have response messages: call_1",
    ),
    "result without a call": (
        [
            {"role": "user", "content": "list"},
            {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
        ],
        "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
    ),
    "assistant with nothing": (
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}],
        "Invalid value for 'content': expected a string, got null.",
    ),
}


@pytest.mark.parametrize("case", sorted(ANTHROPIC_INVALID))
def test_invalid_anthropic_histories_get_the_real_400(fake_llm, case):
    messages, expected = ANTHROPIC_INVALID[case]
    fake_llm.reply("never sent")
    body = {"model": "m", "max_tokens": 64, "stream": True, "messages": messages}
    status, _, data = post(fake_llm, "/v1/messages", body)
    error = json.loads(data)
    assert status == 400 and error["type"] == "error"
    assert error["error"]["type"] == "invalid_request_error"
    assert expected in error["error"]["message"]
    assert fake_llm.pending == 1  # the scripted reply waits for a valid request


@pytest.mark.parametrize("case", sorted(OPENAI_INVALID))
def test_invalid_openai_histories_get_the_real_400(fake_llm, case):
    messages, expected = OPENAI_INVALID[case]
    body = {"model": "m", "stream": True, "messages": messages}
    status, _, data = post(fake_llm, "/v1/chat/completions", body)
    error = json.loads(data)["error"]
    assert status == 400 and error["type"] == "invalid_request_error"
    assert expected in error["message"] and error["param"].startswith("messages")


def test_a_valid_tool_exchange_is_accepted_on_both_wires(fake_llm):
    fake_llm.reply("ok")
    fake_llm.reply("ok")
    anthropic = [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [TOOL_USE]},
        {"role": "user", "content": [TOOL_RESULT, {"type": "text", "text": "thanks"}]},
    ]
    openai = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": None, "tool_calls": [OPENAI_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
    ]
    assert post(fake_llm, "/v1/messages", {"model": "m", "messages": anthropic})[0] == 200
    assert post(fake_llm, "/v1/chat/completions", {"model": "m", "messages": openai})[0] == 200
