"""Providers by name. Choosing one is a dictionary lookup, never URL sniffing.

Entries are import paths so that ``hermes --help`` never imports an SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from hermes.errors import ConfigError
from hermes.providers.base import Provider, ProviderSettings

if TYPE_CHECKING:
    from hermes.config import Config

PROVIDERS: dict[str, str | type[Provider]] = {
    "anthropic": "hermes.providers.anthropic:AnthropicProvider",
    "openai": "hermes.providers.openai_compat:OpenAIProvider",
    "openrouter": "hermes.providers.openai_compat:OpenRouterProvider",
}


def register_provider(name: str, provider: str | type[Provider]) -> None:
    """Add a provider class (or its ``module:Class`` path) under ``name``."""
    PROVIDERS[name] = provider


def provider_class(name: str) -> type[Provider]:
    try:
        entry = PROVIDERS[name]
    except KeyError:
        valid = ", ".join(sorted(PROVIDERS))
        raise ConfigError(
            f"Unknown provider {name!r}: set HERMES_PROVIDER to one of {valid}."
        ) from None
    if isinstance(entry, str):
        module_name, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), attr)
        PROVIDERS[name] = entry
    return entry


def create_provider(config: Config, *, model: str | None = None) -> Provider:
    """Build the configured provider; raises ConfigError naming what to set if it can't."""
    config.require_provider()
    cls = provider_class(config.provider)
    settings = ProviderSettings(
        model=model or config.model,
        api_key=config.api_key,
        base_url=config.base_url,
        connect_timeout=config.connect_timeout,
        stream_timeout=config.stream_timeout,
        max_retries=config.max_retries,
        retry_base_delay=config.retry_base_delay,
        retry_max_delay=config.retry_max_delay,
    )
    return cls(settings)
