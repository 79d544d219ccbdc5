"""Servers that speak the wire formats loosely: the providers must still understand them."""

from __future__ import annotations

import pytest

from hermes.errors import ProviderError
from hermes.events import StreamEnd, TextDelta, ToolCall
from hermes.messages import Message, ModelRequest, ToolSpec
from hermes.providers.base import ProviderSettings
from hermes.providers.registry import provider_class
from tests.fakes.llm_fixtures import FAST_SETTINGS

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


def request() -> ModelRequest:
    return ModelRequest(
        model="m",
        system="You are Hermes.",
        messages=(Message(role="user", content="hi"),),
        tools=(READ_FILE,),
    )


def chunks_of(provider) -> list:
    return list(provider.stream(request()))


def test_anthropic_sse_without_event_lines(fake_llm, fake_provider):
    # Only `data:` lines: the type is inside the JSON, as in every Anthropic event.
    fake_llm.reply(
        "Let me look.",
        tool_calls=[("read_file", {"path": "a.txt"}, "toolu_1")],
        quirks=("no_event_names",),
    )
    chunks = chunks_of(fake_provider("anthropic"))
    assert [c for c in chunks if isinstance(c, TextDelta)]
    assert "".join(c.delta for c in chunks if isinstance(c, TextDelta)) == "Let me look."
    assert [c for c in chunks if isinstance(c, ToolCall)] == [
        ToolCall(id="toolu_1", name="read_file", input={"path": "a.txt"})
    ]
    assert chunks[-1] == StreamEnd(stop_reason="tool_use")
    assert len(fake_llm.requests) == 1  # understood the first time, not retried


def test_anthropic_in_stream_error_without_event_line_is_reported(fake_llm, fake_provider):
    fake_llm.reply("partial", stream_error="invalid_request_error", quirks=("no_event_names",))
    with pytest.raises(ProviderError) as error:
        chunks_of(fake_provider("anthropic", max_retries=0))
    assert "invalid_request_error" in error.value.message
    assert "ended early" not in error.value.message


def test_anthropic_tool_input_whole_in_block_start(fake_llm, fake_provider):
    fake_llm.reply(
        tool_calls=[("read_file", {"path": "b.txt"}, "toolu_2")], quirks=("input_in_start",)
    )
    calls = [c for c in chunks_of(fake_provider("anthropic")) if isinstance(c, ToolCall)]
    assert calls == [ToolCall(id="toolu_2", name="read_file", input={"path": "b.txt"})]


def test_openai_arguments_sent_as_an_object(fake_llm, fake_provider):
    fake_llm.reply(
        tool_calls=[("read_file", {"path": "c.txt"}), ("read_file", {"path": "d.txt"})],
        quirks=("args_object",),
    )
    calls = [c for c in chunks_of(fake_provider("openai")) if isinstance(c, ToolCall)]
    assert [(c.name, c.input, c.input_error) for c in calls] == [
        ("read_file", {"path": "c.txt"}, None),
        ("read_file", {"path": "d.txt"}, None),
    ]


def test_openai_parallel_calls_that_all_say_index_zero_stay_apart(fake_llm, fake_provider):
    """Ollama sends each call of a batch whole, every one with index 0 and its own id."""
    fake_llm.reply(
        tool_calls=[("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})],
        tool_call_style="whole",
        quirks=("index_zero",),
    )
    calls = [c for c in chunks_of(fake_provider("openai")) if isinstance(c, ToolCall)]
    assert [(c.name, c.input, c.input_error) for c in calls] == [
        ("read_file", {"path": "a.txt"}, None),
        ("read_file", {"path": "b.txt"}, None),
    ]
    assert len({c.id for c in calls}) == 2


def test_openai_without_done_line_and_without_call_ids(fake_llm, fake_provider):
    fake_llm.reply(tool_calls=[("read_file", {"path": "e.txt"})], quirks=("no_done", "no_ids"))
    chunks = chunks_of(fake_provider("openai"))
    [call] = [c for c in chunks if isinstance(c, ToolCall)]
    assert call.input == {"path": "e.txt"} and call.id
    assert chunks[-1] == StreamEnd(stop_reason="tool_use")


def anthropic_at(base_url: str):
    settings = ProviderSettings(model="m", api_key="k", base_url=base_url, **FAST_SETTINGS)
    return provider_class("anthropic")(settings)


def test_anthropic_base_url_ending_in_v1_is_not_doubled(fake_llm):
    # The SDK appends /v1/messages itself; "http://host/v1" is a common way to write the URL.
    for suffix in ("/v1", "/v1/", "/"):
        fake_llm.reply("ok")
        chunks = chunks_of(anthropic_at(fake_llm.url + suffix))
        assert chunks[0] == TextDelta("ok")
        assert fake_llm.last_request.path == "/v1/messages"


def test_a_whitespace_only_answer_is_not_sent_back_as_a_text_block():
    # Anthropic rejects text blocks without non-whitespace text, so a model that once
    # answered "  \n" would otherwise break every later turn of the session.
    from hermes.providers.anthropic import convert_messages

    history = (
        Message(role="user", content="hi"),
        Message(role="assistant", content="  \n"),
        Message(role="user", content="again"),
        Message(role="assistant", content="\n", tool_calls=(ToolCall(id="t", name="read_file"),)),
        Message(role="tool", content="", tool_call_id="t", tool_name="read_file"),
    )
    body = convert_messages(history)
    blocks = [b for m in body for b in m["content"]]
    assert all(b["text"].strip() for b in blocks if b["type"] == "text"), body
    assert [m["role"] for m in body] == ["user", "assistant", "user"]


def test_a_server_that_answers_a_stream_request_with_plain_json(fake_llm, fake_provider, wire):
    fake_llm.reply(
        "Reading it.",
        tool_calls=[("read_file", {"path": "f.txt"}, "call_9")],
        quirks=("ignore_stream",),
    )
    chunks = chunks_of(fake_provider(wire))
    assert chunks[0] == TextDelta("Reading it.")
    assert [c for c in chunks if isinstance(c, ToolCall)] == [
        ToolCall(id="call_9", name="read_file", input={"path": "f.txt"})
    ]
    assert chunks[-1] == StreamEnd(stop_reason="tool_use")
    assert len(fake_llm.requests) == 1


def test_anthropic_text_given_in_block_start(fake_llm, fake_provider):
    fake_llm.reply("All in one go.", quirks=("text_in_start",))
    chunks = chunks_of(fake_provider("anthropic"))
    assert "".join(c.delta for c in chunks if isinstance(c, TextDelta)) == "All in one go."
