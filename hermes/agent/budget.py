"""How many tokens a request may hold, how many it holds, and what one turn may spend.

Three small pieces, all local (no network, no tokenizer download):

* :func:`model_limits`: the context window and output limit of known models,
  a conservative default for the rest, ``HERMES_CONTEXT_WINDOW`` over both.
* :func:`estimate_tokens` and friends: a calibrated characters-per-token
  estimate. Each session stores the ratio between what the provider last
  reported and what we estimated for that request, and every later estimate
  is scaled by it, so the estimate tracks the real tokenizer of whatever model
  is answering. The ratio lives in the database, so a restarted process makes
  the very same decisions (and sends the very same bytes).
* :class:`TurnLimits`: ``HERMES_MAX_TURN_COST_USD`` / ``HERMES_MAX_TURN_SECONDS``,
  checked by the loop between model calls (a safe point: every tool call
  already has its result).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

from hermes.config import Config
from hermes.events import Usage
from hermes.messages import Message, ToolSpec
from hermes.providers.pricing import normalize


@dataclass(frozen=True)
class ModelLimits:
    """Tokens: the whole context window, and the most one answer may have."""

    context_window: int
    max_output: int


# From the providers' model pages. Dated snapshots and OpenRouter names map
# onto these through pricing.normalize; unknown names fall back on the
# longest known prefix (gpt-5-codex -> gpt-5), then on DEFAULT_LIMITS.
MODEL_LIMITS: dict[str, ModelLimits] = {
    "claude-opus-4-6": ModelLimits(200_000, 128_000),
    "claude-sonnet-4-6": ModelLimits(200_000, 64_000),
    "claude-opus-4-5": ModelLimits(200_000, 64_000),
    "claude-sonnet-4-5": ModelLimits(200_000, 64_000),
    "claude-haiku-4-5": ModelLimits(200_000, 64_000),
    "claude-opus-4-1": ModelLimits(200_000, 32_000),
    "claude-opus-4": ModelLimits(200_000, 32_000),
    "claude-sonnet-4": ModelLimits(200_000, 64_000),
    "claude-3-7-sonnet": ModelLimits(200_000, 64_000),
    "claude-3-5-sonnet": ModelLimits(200_000, 8_192),
    "claude-3-5-haiku": ModelLimits(200_000, 8_192),
    "claude-3-haiku": ModelLimits(200_000, 4_096),
    "gpt-5": ModelLimits(400_000, 128_000),
    "gpt-5-mini": ModelLimits(400_000, 128_000),
    "gpt-5-nano": ModelLimits(400_000, 128_000),
    "gpt-4.1": ModelLimits(1_047_576, 32_768),
    "gpt-4.1-mini": ModelLimits(1_047_576, 32_768),
    "gpt-4.1-nano": ModelLimits(1_047_576, 32_768),
    "gpt-4o": ModelLimits(128_000, 16_384),
    "gpt-4o-mini": ModelLimits(128_000, 16_384),
    "o3": ModelLimits(200_000, 100_000),
    "o4-mini": ModelLimits(200_000, 100_000),
}
# Local and unknown models: many local servers run with a small window, and
# compacting early is safe where sending too much is not.
DEFAULT_LIMITS = ModelLimits(32_768, 8_192)

# English prose runs near 4 characters per token and code or JSON near 3;
# 3.3 errs on the side of more tokens. Other scripts (CJK above all) are close
# to one token per character. The session's calibration corrects both.
ASCII_CHARS_PER_TOKEN = 3.3
NON_ASCII_TOKENS_PER_CHAR = 1.0
MESSAGE_OVERHEAD = 4  # role and framing tokens of one message
TOOL_CALL_OVERHEAD = 12
# The provider's report is trusted within these bounds; outside them (a local
# server that reports nothing useful) the estimate stays sane.
RATIO_BOUNDS = (0.5, 2.5)


def model_limits(model: str, config: Config | None = None) -> ModelLimits:
    """The limits of ``model``; ``HERMES_CONTEXT_WINDOW`` replaces the window."""
    name = normalize(model or "")
    limits = MODEL_LIMITS.get(name)
    if limits is None:
        prefixes = [key for key in MODEL_LIMITS if name.startswith(key + "-")]
        limits = MODEL_LIMITS[max(prefixes, key=len)] if prefixes else DEFAULT_LIMITS
    if config is not None and config.context_window:
        window = config.context_window
        limits = ModelLimits(window, min(limits.max_output, window))
    return limits


@dataclass(frozen=True)
class ContextBudget:
    """What one request of a session may hold, in (estimated) tokens."""

    window: int
    output_reserve: int  # the request's max_tokens
    threshold: float

    @property
    def prompt_limit(self) -> int:
        """The most a prompt may hold and still leave room for the answer."""
        return self.window - self.output_reserve

    @property
    def trigger(self) -> int:
        """A prompt over this is compacted before it is sent."""
        return min(int(self.window * self.threshold), self.prompt_limit)

    @property
    def target(self) -> int:
        """What a compaction aims for: half the trigger, so the next one is many turns away."""
        return self.trigger // 2

    @property
    def summary_tokens(self) -> int:
        """The longest summary a compaction may write."""
        return max(256, min(2_048, self.window // 10))


def context_budget(model: str, config: Config) -> ContextBudget:
    limits = model_limits(model, config)
    reserve = max(256, min(config.max_tokens, limits.max_output, limits.context_window // 4))
    return ContextBudget(limits.context_window, reserve, config.compact_threshold)


# -- estimates -------------------------------------------------------------------


def estimate_tokens(text: str | None) -> int:
    """Tokens in ``text`` by the calibrated character estimate (before the session's ratio)."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    return math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN + other * NON_ASCII_TOKENS_PER_CHAR)


def estimate_message(message: Message) -> int:
    total = MESSAGE_OVERHEAD + estimate_tokens(message.content) + estimate_tokens(message.context)
    for call in message.tool_calls:
        arguments = json.dumps(call.input, ensure_ascii=False)
        total += TOOL_CALL_OVERHEAD + estimate_tokens(call.name) + estimate_tokens(arguments)
    return total


def estimate_tools(tools: tuple[ToolSpec, ...]) -> int:
    return sum(
        TOOL_CALL_OVERHEAD
        + estimate_tokens(t.name)
        + estimate_tokens(t.description)
        + estimate_tokens(json.dumps(t.parameters, ensure_ascii=False))
        for t in tools
    )


def prompt_tokens_reported(usage: Usage) -> int:
    """What the provider counted for a request's prompt (cached parts included)."""
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def calibrated_ratio(reported: int, estimated: int) -> float | None:
    """The session's new estimate ratio from one call, or None when the report says nothing."""
    if reported <= 0 or estimated <= 0:
        return None
    low, high = RATIO_BOUNDS
    return round(min(high, max(low, reported / estimated)), 4)


def scaled(tokens: int, ratio: float | None) -> int:
    return math.ceil(tokens * (ratio or 1.0))


# -- per-turn limits ----------------------------------------------------------------


class TurnLimits:
    """The optional cost and wall-time budget of one turn, started when the turn starts."""

    def __init__(self, config: Config, *, clock=time.monotonic):
        self.max_cost = config.max_turn_cost_usd
        self.max_seconds = config.max_turn_seconds
        self.clock = clock
        self.started = clock()

    def exceeded(self, spent: list[Usage]) -> str | None:
        """Why the turn must stop now, or None. Called between model calls."""
        if self.max_seconds is not None:
            elapsed = self.clock() - self.started
            if elapsed >= self.max_seconds:
                return (
                    f"stopped: this turn ran {elapsed:.0f} s, reaching HERMES_MAX_TURN_SECONDS "
                    f"({self.max_seconds:g} s). What it did is saved; say 'continue' to go on."
                )
        if self.max_cost is not None and spent:
            cost = sum(u.cost_usd for u in spent if u.cost_usd is not None)
            if cost >= self.max_cost:
                return (
                    f"stopped: this turn cost ${cost:.4f}, reaching HERMES_MAX_TURN_COST_USD "
                    f"(${self.max_cost:g}). What it did is saved; say 'continue' to go on."
                )
        return None
