"""Providers streaming from the fake server through the real SDKs, in both wire formats."""

from __future__ import annotations

import json

import pytest

from hermes.events import StreamEnd, TextDelta, ToolCall, Usage
from hermes.messages import Message, ModelRequest, ToolSpec
from hermes.providers.registry import create_provider

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
LIST_DIR = ToolSpec(name="list_dir", description="List a folder.", parameters={})


def request(*messages: Message, tools=(READ_FILE, LIST_DIR), model="m") -> ModelRequest:
    return ModelRequest(
        model=model,
        system="You are Hermes.",
        messages=messages or (Message(role="user", content="hi"),),
        tools=tools,
        max_tokens=1000,
    )


def collect(provider, req: ModelRequest) -> list:
    return list(provider.stream(req))


def text_of(chunks: list) -> str:
    return "".join(c.delta for c in chunks if isinstance(c, TextDelta))


def test_text_streams_in_pieces(fake_llm, fake_provider, wire):
    fake_llm.reply("The quick brown fox jumps over the lazy dog.", chunk_size=5)
    chunks = collect(fake_provider(wire), request())
    deltas = [c for c in chunks if isinstance(c, TextDelta)]
    assert len(deltas) == 9
    assert text_of(chunks) == "The quick brown fox jumps over the lazy dog."
    assert chunks[-1] == StreamEnd(stop_reason="end_turn")


def test_several_tool_calls_with_split_arguments(fake_llm, fake_provider, wire):
    fake_llm.reply(
        "Let me look.",
        tool_calls=[
            ("read_file", {"path": "notes/a long name.txt"}, "call_1"),
            ("list_dir", {"path": ".", "depth": 2, "nested": {"x": [1, 2]}}, "call_2"),
        ],
        args_chunk_size=3,
    )
    chunks = collect(fake_provider(wire), request())
    calls = [c for c in chunks if isinstance(c, ToolCall)]
    assert calls == [
        ToolCall(id="call_1", name="read_file", input={"path": "notes/a long name.txt"}),
        ToolCall(
            id="call_2", name="list_dir", input={"path": ".", "depth": 2, "nested": {"x": [1, 2]}}
        ),
    ]
    assert all(c.input_error is None for c in calls)
    assert chunks[-1] == StreamEnd(stop_reason="tool_use")
    assert text_of(chunks) == "Let me look."


@pytest.mark.parametrize("style", ["split", "repeat", "whole", "noindex"])
def test_openai_tool_call_styles_of_compatible_servers(fake_llm, fake_provider, style):
    fake_llm.reply(
        tool_calls=[("read_file", {"path": "a.txt"}), ("list_dir", {"path": "b"})],
        tool_call_style=style,
        args_chunk_size=2,
    )
    calls = [c for c in collect(fake_provider("openai"), request()) if isinstance(c, ToolCall)]
    assert [(c.name, c.input) for c in calls] == [
        ("read_file", {"path": "a.txt"}),
        ("list_dir", {"path": "b"}),
    ]


def test_usage_with_cache_tokens_and_cost(fake_llm, fake_provider, wire):
    model = "claude-sonnet-4-6" if wire == "anthropic" else "gpt-4.1"
    fake_llm.reply("ok", usage=(1000, 200, 5000, 0))
    chunks = collect(fake_provider(wire, model=model), request(model=model))
    [usage] = [c for c in chunks if isinstance(c, Usage)]
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (1000, 200, 5000)
    if wire == "anthropic":  # 1000*3 + 200*15 + 5000*0.3 per million
        assert usage.cost_usd == pytest.approx(0.0075)
    else:  # 1000*2 + 200*8 + 5000*0.5 per million
        assert usage.cost_usd == pytest.approx(0.0061)


def test_anthropic_reports_cache_writes(fake_llm, fake_provider):
    fake_llm.reply("ok", usage=(10, 2, 0, 4000))
    [usage] = [c for c in collect(fake_provider("anthropic"), request()) if isinstance(c, Usage)]
    assert usage.cache_write_tokens == 4000
    assert usage.cost_usd is None  # model "m" has no known price


def test_server_without_usage_yields_no_usage(fake_llm, fake_provider):
    fake_llm.reply("ok", usage=None)
    chunks = collect(fake_provider("openai"), request())
    assert not [c for c in chunks if isinstance(c, Usage)]
    assert chunks == [TextDelta("ok"), StreamEnd(stop_reason="end_turn")]


def test_openai_asks_for_usage(fake_llm, fake_provider):
    fake_llm.reply("ok")
    collect(fake_provider("openai"), request())
    assert fake_llm.last_request.json["stream_options"] == {"include_usage": True}
    assert fake_llm.last_request.json["stream"] is True


def test_max_tokens_maps_to_finish_reason(fake_llm, fake_provider, wire):
    fake_llm.reply("cut by the limit", stop_reason="max_tokens")
    assert collect(fake_provider(wire), request())[-1] == StreamEnd(stop_reason="max_tokens")


@pytest.mark.parametrize(
    "raw",
    ['{"path": "a.txt"', "[1, 2]", '"just text"', "{" * 5000],
    ids=["truncated", "array", "string", "deeply-nested"],
)
def test_invalid_tool_json_becomes_input_error(fake_llm, fake_provider, wire, raw):
    fake_llm.reply(tool_calls=[("read_file", raw)])
    [call] = [c for c in collect(fake_provider(wire), request()) if isinstance(c, ToolCall)]
    assert call.input == {}
    assert (
        call.input_error and "read_file" in call.input_error and "JSON object" in call.input_error
    )


def test_tool_with_no_arguments_gets_empty_input(fake_llm, fake_provider, wire):
    fake_llm.reply(tool_calls=[("list_dir", "")])
    [call] = [c for c in collect(fake_provider(wire), request()) if isinstance(c, ToolCall)]
    assert call.input == {} and call.input_error is None


CONVERSATION = (
    Message(role="user", content="What is in a.txt and b.txt?", context="Skills: none relevant."),
    Message(
        role="assistant",
        content="Reading both.",
        tool_calls=(
            ToolCall(id="t1", name="read_file", input={"path": "a.txt"}),
            ToolCall(id="t2", name="read_file", input={"path": "b.txt"}),
        ),
    ),
    Message(role="tool", content="alpha", tool_call_id="t1", tool_name="read_file"),
    Message(
        role="tool", content="no such file", tool_call_id="t2", tool_name="read_file", is_error=True
    ),
)


def test_anthropic_request_body(fake_llm, fake_provider):
    fake_llm.reply("a.txt says alpha.")
    collect(fake_provider("anthropic"), request(*CONVERSATION))
    body = fake_llm.last_request.json
    assert fake_llm.last_request.path == "/v1/messages"
    assert body["system"] == [
        {"type": "text", "text": "You are Hermes.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][0] == {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": READ_FILE.parameters,
    }
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["input_schema"] == {"type": "object", "properties": {}}
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    first = body["messages"][0]["content"]
    assert first == [
        {"type": "text", "text": "Skills: none relevant."},
        {"type": "text", "text": "What is in a.txt and b.txt?"},
    ]
    assistant = body["messages"][1]["content"]
    assert assistant[0] == {"type": "text", "text": "Reading both."}
    assert assistant[1] == {
        "type": "tool_use",
        "id": "t1",
        "name": "read_file",
        "input": {"path": "a.txt"},
    }
    results = body["messages"][2]["content"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "alpha",
        "is_error": False,
    }
    assert results[1]["is_error"] is True and results[1]["tool_use_id"] == "t2"
    # The conversation so far is a cache breakpoint too.
    assert results[-1]["cache_control"] == {"type": "ephemeral"}
    assert body["max_tokens"] == 1000


def test_openai_request_body(fake_llm, fake_provider):
    fake_llm.reply("a.txt says alpha.")
    collect(fake_provider("openai"), request(*CONVERSATION))
    body = fake_llm.last_request.json
    assert fake_llm.last_request.path == "/v1/chat/completions"
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "You are Hermes."}
    assert messages[1] == {
        "role": "user",
        "content": "Skills: none relevant.\n\nWhat is in a.txt and b.txt?",
    }
    assert messages[2]["tool_calls"][1] == {
        "id": "t2",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": "b.txt"})},
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "t1", "content": "alpha"}
    assert messages[4] == {"role": "tool", "tool_call_id": "t2", "content": "Error: no such file"}
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": READ_FILE.parameters,
        },
    }
    # A server at a custom base URL (Ollama, vLLM, llama.cpp) reads max_tokens.
    assert body["max_tokens"] == 1000 and "max_completion_tokens" not in body


@pytest.mark.parametrize(
    ("provider", "base_url", "field"),
    [
        ("openai", None, "max_completion_tokens"),
        ("openai", "https://api.openai.com/v1", "max_completion_tokens"),
        ("openai", "http://localhost:11434/v1", "max_tokens"),  # Ollama
        ("openai", "http://gpu-box:8000/v1", "max_tokens"),  # vLLM
        ("openai", "http://127.0.0.1:8080/v1", "max_tokens"),  # llama.cpp
        ("openai", "http://localhost:1234/v1", "max_tokens"),  # LM Studio
        ("openrouter", None, "max_tokens"),
    ],
)
def test_each_server_kind_gets_the_token_cap_it_reads(provider, base_url, field):
    from hermes.providers.base import ProviderSettings
    from hermes.providers.registry import provider_class

    settings = ProviderSettings(model="m", api_key="k", base_url=base_url)
    params = provider_class(provider)(settings).request_params(request())
    assert params[field] == 1000
    other = {"max_tokens", "max_completion_tokens"} - {field}
    assert not other & params.keys()


def test_the_scripted_compatible_server_receives_max_tokens_from_the_curator(
    fake_llm, fake_provider
):
    fake_llm.reply("NONE")
    fake_provider("openai").complete("Summarise.", "text", max_tokens=300)
    assert fake_llm.last_request.json["max_tokens"] == 300


def test_openrouter_sends_attribution_and_max_tokens(fake_llm, fake_provider):
    fake_llm.reply("ok")
    collect(fake_provider("openrouter"), request())
    assert fake_llm.last_request.headers["x-title"] == "Hermes"
    assert fake_llm.last_request.json["max_tokens"] == 1000


def test_complete_collects_text(fake_llm, fake_provider, wire):
    fake_llm.reply("A short summary.")
    assert fake_provider(wire).complete("Summarise.", "Long text") == "A short summary."


def test_create_provider_from_config(fake_llm, make_config, wire):
    config = make_config(**fake_llm.config_overrides(wire))
    provider = create_provider(config)
    assert provider.name == wire
    fake_llm.reply("configured")
    req = request(model=provider.model)
    assert text_of(collect(provider, req)) == "configured"
    assert fake_llm.last_request.json["model"] == provider.model


def test_consumer_stopping_early_closes_the_stream(fake_llm, fake_provider, wire):
    fake_llm.reply("x" * 400, chunk_size=1)
    fake_llm.reply("next")
    provider = fake_provider(wire)
    stream = provider.stream(request())
    assert isinstance(next(stream), TextDelta)
    stream.close()
    assert text_of(collect(provider, request())) == "next"


def test_sdks_are_not_imported_until_used():
    import subprocess
    import sys

    code = (
        "import sys, hermes.providers.anthropic, hermes.providers.openai_compat; "
        "print('anthropic' in sys.modules, 'openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
