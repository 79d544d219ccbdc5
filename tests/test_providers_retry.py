"""Backoff, Retry-After, the retry rule for streams, pricing and tool-argument parsing."""

from __future__ import annotations

import email.utils

import pytest

from hermes.errors import ProviderError
from hermes.events import TextDelta, Usage
from hermes.providers.base import ProviderSettings
from hermes.providers.convert import parse_tool_input
from hermes.providers.pricing import cost, normalize
from hermes.providers.retry import ProviderFailure, backoff_delay, parse_retry_after, retrying

SETTINGS = ProviderSettings(model="m", max_retries=3, retry_base_delay=1.0, retry_max_delay=10.0)


def test_backoff_grows_exponentially_with_jitter_and_a_ceiling():
    assert backoff_delay(0, SETTINGS, rand=lambda: 1.0) == 1.0
    assert backoff_delay(2, SETTINGS, rand=lambda: 1.0) == 4.0
    assert backoff_delay(2, SETTINGS, rand=lambda: 0.0) == 2.0  # jitter: half to full
    assert backoff_delay(10, SETTINGS, rand=lambda: 1.0) == 10.0


def test_retry_after_wins_but_is_capped():
    assert backoff_delay(0, SETTINGS, retry_after=3.0) == 3.0
    assert backoff_delay(0, SETTINGS, retry_after=0.0) == 0.0
    assert backoff_delay(0, SETTINGS, retry_after=86400.0) == 10.0


def test_parse_retry_after_forms():
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": email.utils.formatdate(now - 60)}, now=now) == 0.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def attempts(*outcomes):
    """An attempt factory: each call plays the next outcome (chunks, then maybe an error)."""
    calls = iter(outcomes)

    def attempt():
        chunks, error = next(calls)
        yield from chunks
        if error:
            raise error

    return attempt


def test_retrying_retries_only_before_output():
    slept: list[float] = []
    busy = ProviderFailure("busy", retryable=True, retry_after=0.0)
    attempt = attempts(([], busy), ([TextDelta("hi")], None))
    assert list(retrying(SETTINGS, attempt, sleep=slept.append)) == [TextDelta("hi")]
    assert slept == [0.0]

    attempt = attempts(([TextDelta("half")], ProviderFailure("cut", retryable=True)))
    stream = retrying(SETTINGS, attempt, sleep=slept.append)
    assert next(stream) == TextDelta("half")
    with pytest.raises(ProviderError, match="^cut$") as info:
        next(stream)
    assert info.value.retryable


def test_retrying_stops_at_once_for_permanent_errors():
    attempt = attempts(([], ProviderFailure("bad key", retryable=False)))
    with pytest.raises(ProviderError, match="^bad key$"):
        list(retrying(SETTINGS, attempt, sleep=lambda s: None))


def test_retrying_gives_up_after_max_retries():
    failure = ProviderFailure("overloaded", retryable=True)
    attempt = attempts(*[([], failure)] * 4)
    with pytest.raises(ProviderError, match="gave up after 4 attempts"):
        list(retrying(SETTINGS, attempt, sleep=lambda s: None))


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ],
)
def test_model_names_normalize_to_price_keys(model, key):
    assert normalize(model) == key


def test_cost_counts_every_kind_of_token():
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_tokens=1_000_000,
        cache_write_tokens=1_000_000,
    )
    assert cost("claude-sonnet-4-5", usage) == pytest.approx(3 + 15 + 0.3 + 3.75)
    assert cost("llama3.1:8b", usage) is None
    assert cost("meta-llama/llama-3.3-70b-instruct:free", usage) == 0.0


@pytest.mark.parametrize(
    ("raw", "expected", "has_error"),
    [
        ('{"path": "a"}', {"path": "a"}, False),
        ("", {}, False),
        ("   ", {}, False),
        ('{"path": ', {}, True),
        ("null", {}, True),
        ("[1]", {}, True),
        ("[" * 100_000, {}, True),
    ],
)
def test_parse_tool_input(raw, expected, has_error):
    value, error = parse_tool_input("read_file", raw)
    assert value == expected
    assert (error is not None) == has_error
