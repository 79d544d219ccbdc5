"""Failures: retries before output, clear messages after, never the API key."""

from __future__ import annotations

import time

import pytest

from hermes.errors import ProviderError
from hermes.events import StreamEnd, TextDelta, Usage
from hermes.messages import Message, ModelRequest
from tests.fakes.llm_server import FakeLLM

SECRET = "sk-test-SECRET-0123456789"
KEY_VARIABLE = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
REQUEST = ModelRequest(model="m", system="s", messages=(Message(role="user", content="hi"),))
ANSWER = "A complete answer that arrives in several pieces."


def run(provider) -> tuple[list, ProviderError | None]:
    """The chunks a stream yielded before it failed, and the failure."""
    chunks: list = []
    try:
        for chunk in provider.stream(REQUEST):
            chunks.append(chunk)
    except ProviderError as exc:
        return chunks, exc
    return chunks, None


def text_of(chunks: list) -> str:
    return "".join(c.delta for c in chunks if isinstance(c, TextDelta))


def test_rate_limit_with_retry_after_is_retried_once(fake_llm, fake_provider, wire):
    fake_llm.error(429, retry_after=0)
    fake_llm.reply("Hello")
    chunks, error = run(fake_provider(wire))
    assert error is None
    assert text_of(chunks) == "Hello"  # one answer, not two
    assert len(fake_llm.requests) == 2


def test_retry_after_is_honoured_and_capped(fake_llm, fake_provider, wire):
    fake_llm.error(429, retry_after=0.2)
    fake_llm.error(503, retry_after=3600)  # capped by retry_max_delay
    fake_llm.reply("Hello")
    started = time.monotonic()
    chunks, error = run(fake_provider(wire, retry_max_delay=0.3))
    elapsed = time.monotonic() - started
    assert error is None and text_of(chunks) == "Hello"
    assert 0.45 <= elapsed < 2.5


@pytest.mark.parametrize("status", [500, 529])
def test_server_errors_are_retried_then_give_up_clearly(fake_llm, fake_provider, wire, status):
    for _ in range(3):
        fake_llm.error(status)
    chunks, error = run(fake_provider(wire, max_retries=2))
    assert chunks == []
    assert len(fake_llm.requests) == 3
    assert error.retryable is True
    assert "gave up after 3 attempts" in error.message
    assert f"({status})" in error.message


def test_overloaded_after_retries_succeeds(fake_llm, fake_provider, wire):
    fake_llm.error(529)
    fake_llm.error(500)
    fake_llm.reply("Finally")
    chunks, error = run(fake_provider(wire, max_retries=2))
    assert error is None and text_of(chunks) == "Finally"


def test_no_retries_when_max_retries_is_zero(fake_llm, fake_provider, wire):
    fake_llm.error(503)
    fake_llm.reply("never asked for")
    _, error = run(fake_provider(wire, max_retries=0))
    assert error.retryable and "gave up" not in error.message
    assert fake_llm.pending == 1


def test_401_names_the_variable_and_hides_the_key(fake_llm, fake_provider, wire):
    fake_llm.error(401, f"Incorrect API key provided: {SECRET}")
    _, error = run(fake_provider(wire, api_key=SECRET))
    assert error.retryable is False and error.status == 401
    assert f"check {KEY_VARIABLE[wire]}" in error.message
    assert fake_llm.url in error.message  # says which server refused
    assert SECRET not in str(error)
    assert len(fake_llm.requests) == 1  # never retried


def test_400_shows_the_api_message_without_the_key(fake_llm, fake_provider, wire):
    fake_llm.error(400, f"messages.0: unexpected field; key was {SECRET}")
    _, error = run(fake_provider(wire, api_key=SECRET))
    assert "messages.0: unexpected field" in error.message
    assert SECRET not in error.message
    assert error.retryable is False


def test_404_says_to_set_hermes_model(fake_llm, fake_provider, wire):
    fake_llm.error(404, "model: no-such-model")
    _, error = run(fake_provider(wire, model="no-such-model"))
    assert "HERMES_MODEL" in error.message and fake_llm.url in error.message


def test_404_from_a_bare_host_suggests_v1(fake_llm, fake_provider):
    # http://localhost:11434 instead of http://localhost:11434/v1: the most common slip.
    fake_llm.error(404, "404 page not found")
    _, error = run(fake_provider("openai", base_url=fake_llm.url))
    assert f"{fake_llm.url}/v1" in error.message
    fake_llm.error(404, "model: no-such-model")
    _, error = run(fake_provider("openai"))
    assert "/v1/v1" not in error.message and "try " not in error.message


def test_context_too_long_says_so(fake_llm, fake_provider, wire):
    if wire == "anthropic":
        fake_llm.error(400, "prompt is too long: 212000 tokens > 200000 maximum")
    else:
        fake_llm.error(
            400,
            "This model's maximum context length is 128000 tokens.",
            code="context_length_exceeded",
        )
    _, error = run(fake_provider(wire))
    assert "too long" in error.message and "context window" in error.message
    assert error.retryable is False


def test_openai_quota_429_is_not_retried(fake_llm, fake_provider):
    fake_llm.error(429, "You exceeded your current quota.", code="insufficient_quota")
    _, error = run(fake_provider("openai"))
    assert error.retryable is False and "quota" in error.message
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("clean", [False, True], ids=["connection-dropped", "body-ended"])
def test_cut_stream_yields_partial_text_then_retryable_error(fake_llm, fake_provider, wire, clean):
    fake_llm.reply(ANSWER, chunk_size=4, cut_after=5, cut_clean=clean)
    fake_llm.reply("must not be fetched: the partial text was already shown")
    chunks, error = run(fake_provider(wire))
    partial = text_of(chunks)
    assert partial and ANSWER.startswith(partial) and partial != ANSWER
    assert not [c for c in chunks if isinstance(c, StreamEnd | Usage)]
    assert error.retryable is True
    assert "ended early" in error.message
    assert fake_llm.pending == 1  # not retried: that would repeat the text


def test_cut_before_any_output_is_retried(fake_llm, fake_provider, wire):
    fake_llm.reply(ANSWER, cut_after=1)
    fake_llm.reply(ANSWER)
    chunks, error = run(fake_provider(wire))
    assert error is None and text_of(chunks) == ANSWER


def test_stall_mid_stream_times_out_within_the_stream_timeout(fake_llm, fake_provider, wire):
    # Anthropic: message_start, ping, block start, delta... OpenAI: role chunk, delta...
    stall_after = 4 if wire == "anthropic" else 2
    fake_llm.reply(ANSWER, chunk_size=4, stall=5.0, stall_after=stall_after)
    started = time.monotonic()
    chunks, error = run(fake_provider(wire, stream_timeout=0.5))
    elapsed = time.monotonic() - started
    assert text_of(chunks)  # the part before the stall was yielded
    assert error.retryable is True
    assert "stalled for 0.5 s" in error.message
    assert elapsed < 2.5


def test_slow_first_byte_is_retried(fake_llm, fake_provider, wire):
    fake_llm.reply("late", delay=2.0)
    fake_llm.reply("on time")
    chunks, error = run(fake_provider(wire, stream_timeout=0.4))
    assert error is None and text_of(chunks) == "on time"


def test_in_stream_error_event_is_retried_before_output(fake_llm, fake_provider, wire):
    kind = "overloaded_error" if wire == "anthropic" else "server_error"
    fake_llm.reply("x", stream_error=kind)
    fake_llm.reply("recovered")
    chunks, error = run(fake_provider(wire))
    assert error is None and text_of(chunks) == "recovered"


def test_in_stream_error_after_text_is_not_retried(fake_llm, fake_provider, wire):
    at = 4 if wire == "anthropic" else 2
    fake_llm.reply(ANSWER, chunk_size=4, stream_error="overloaded_error", stream_error_after=at)
    chunks, error = run(fake_provider(wire))
    assert text_of(chunks) and error.retryable is True
    assert "overloaded_error" in error.message


def test_connection_refused_says_is_the_server_running(fake_provider, fake_llm, wire):
    provider = fake_provider(wire, max_retries=1)
    fake_llm.stop()
    chunks, error = run(provider)
    assert chunks == []
    assert f"cannot reach {fake_llm.base_url(wire)}: is the server running?" in error.message
    assert error.retryable is True


def test_a_password_in_the_base_url_never_reaches_the_message(fake_llm, wire):
    from hermes.providers.base import ProviderSettings
    from hermes.providers.registry import provider_class

    fake_llm.stop()
    bare = fake_llm.base_url(wire)
    with_login = bare.replace("http://", "http://admin:s3cret-pw@")
    settings = ProviderSettings(model="m", api_key="k", base_url=with_login, max_retries=0)
    _, error = run(provider_class(wire)(settings))
    assert f"cannot reach {bare}:" in error.message
    assert "s3cret-pw" not in error.message and "admin" not in error.message


def test_connection_refused_then_server_comes_back(wire):
    fake = FakeLLM().start()
    port = fake.port
    fake.stop()
    from hermes.providers.base import ProviderSettings
    from hermes.providers.registry import provider_class

    base = f"http://127.0.0.1:{port}" + ("/v1" if wire == "openai" else "")
    settings = ProviderSettings(model="m", api_key="k", base_url=base, max_retries=0)
    _, error = run(provider_class(wire)(settings))
    assert error.retryable and "cannot reach" in error.message


def test_malformed_chunk_is_a_clear_error(fake_llm, fake_provider, wire):
    at = 4 if wire == "anthropic" else 2
    fake_llm.reply(ANSWER, chunk_size=4, malformed_after=at)
    chunks, error = run(fake_provider(wire))
    assert text_of(chunks)
    assert "not valid JSON" in error.message and error.retryable


def test_html_error_page_from_a_proxy(fake_llm, fake_provider, wire):
    page = "<html><body><h1>502 Bad Gateway</h1>" + "x" * 5000 + "</body></html>"
    fake_llm.error(502, raw_body=page)
    _, error = run(fake_provider(wire, max_retries=0))
    assert error.retryable and "(502)" in error.message
    assert "<html>" not in error.message and len(error.message) < 200


def test_connection_refused_gives_up_quickly(wire):
    # Nothing listening is rarely a blip: a few quick retries, not a 10-second backoff.
    import time

    from hermes.providers.base import ProviderSettings
    from hermes.providers.registry import provider_class

    fake = FakeLLM().start()
    fake.stop()
    settings = ProviderSettings(
        model="m", api_key="k", base_url=fake.base_url(wire), max_retries=4, retry_base_delay=1.0
    )
    started = time.monotonic()
    _, error = run(provider_class(wire)(settings))
    assert "cannot reach" in error.message and "5 attempts" in error.message
    assert time.monotonic() - started < 3
