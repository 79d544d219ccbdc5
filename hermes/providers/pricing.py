"""What tokens cost, so the usage event can say ``cost_usd``.

Prices are USD per million tokens from the providers' public price lists.
Unknown models (local servers, new releases) cost ``None``, meaning "unknown",
never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes.events import Usage


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


# Anthropic cache writes are the 5-minute ephemeral rate (1.25x input); OpenAI
# caches automatically and never reports writes, so its write rate is the input rate.
PRICES: dict[str, Price] = {
    "claude-opus-4-6": Price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-5": Price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-1": Price(15.0, 75.0, 1.50, 18.75),
    "claude-opus-4": Price(15.0, 75.0, 1.50, 18.75),
    "claude-sonnet-4-6": Price(3.0, 15.0, 0.30, 3.75),
    "claude-sonnet-4-5": Price(3.0, 15.0, 0.30, 3.75),
    "claude-sonnet-4": Price(3.0, 15.0, 0.30, 3.75),
    "claude-3-7-sonnet": Price(3.0, 15.0, 0.30, 3.75),
    "claude-3-5-sonnet": Price(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10, 1.25),
    "claude-3-5-haiku": Price(0.80, 4.0, 0.08, 1.0),
    "claude-3-haiku": Price(0.25, 1.25, 0.03, 0.30),
    "gpt-5": Price(1.25, 10.0, 0.125, 1.25),
    "gpt-5-mini": Price(0.25, 2.0, 0.025, 0.25),
    "gpt-5-nano": Price(0.05, 0.40, 0.005, 0.05),
    "gpt-4.1": Price(2.0, 8.0, 0.50, 2.0),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10, 0.40),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025, 0.10),
    "gpt-4o": Price(2.50, 10.0, 1.25, 2.50),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075, 0.15),
    "o3": Price(2.0, 8.0, 0.50, 2.0),
    "o4-mini": Price(1.10, 4.40, 0.275, 1.10),
}

# Dated snapshots and aliases price like their family: claude-sonnet-4-5-20250929,
# gpt-4o-2024-08-06, claude-3-5-haiku-latest.
_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")


def normalize(model: str) -> str:
    """The price-table key for a model id (OpenRouter's ``vendor/name`` included)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = name.split(":", 1)[0]  # OpenRouter variants such as ":free" or ":beta"
    name = _SUFFIX.sub("", name)
    if name.startswith("claude-"):
        name = name.replace(".", "-")  # OpenRouter spells claude-sonnet-4.5
    return name


def price(model: str) -> Price | None:
    return PRICES.get(normalize(model))


def cost(model: str, usage: Usage) -> float | None:
    """USD for ``usage`` on ``model``, or None when the model's price is unknown."""
    if model.strip().lower().endswith(":free"):
        return 0.0  # OpenRouter's free variants
    p = price(model)
    if p is None:
        return None
    total = (
        usage.input_tokens * p.input
        + usage.output_tokens * p.output
        + usage.cache_read_tokens * p.cache_read
        + usage.cache_write_tokens * p.cache_write
    ) / 1_000_000
    return round(total, 8)


def priced(model: str, usage: Usage) -> Usage:
    """``usage`` with ``cost_usd`` filled in from the table."""
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cost_usd=cost(model, usage),
    )
