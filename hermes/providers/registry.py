"""Providers by name. Choosing one is a dictionary lookup, never URL sniffing.

Providers are plugins, the way simonw/llm does it: a package registers a
``Provider`` subclass under the entry point group ``hermes.providers``::

    [project.entry-points."hermes.providers"]
    echo = "hermes_echo:EchoProvider"

and ``HERMES_PROVIDER=echo`` selects it. Hermes' own providers are
registered the same way in its pyproject.toml. Entries are loaded only when
used, so ``hermes --help`` never imports an SDK. A plugin class may set
``key_variable`` (the environment variable holding its API key; none when it
needs no key) and ``default_model``.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING

from hermes.errors import ConfigError
from hermes.providers.base import Provider, ProviderSettings

if TYPE_CHECKING:
    from hermes.config import Config

GROUP = "hermes.providers"

# The same entries as pyproject.toml, for a source checkout that was never
# installed (no package metadata, so no entry points).
BUILT_IN = {
    "anthropic": "hermes.providers.anthropic:AnthropicProvider",
    "openai": "hermes.providers.openai_compat:OpenAIProvider",
    "openrouter": "hermes.providers.openai_compat:OpenRouterProvider",
}


@cache
def _entries() -> dict[str, metadata.EntryPoint]:
    found = {ep.name: ep for ep in metadata.entry_points(group=GROUP)}
    for name, target in BUILT_IN.items():
        found.setdefault(name, metadata.EntryPoint(name=name, value=target, group=GROUP))
    return found


def provider_names() -> list[str]:
    """Every registered provider name, built-in and plugin."""
    return sorted(_entries())


@cache
def provider_class(name: str) -> type[Provider]:
    """The class registered as ``name``; ConfigError naming the choices when there is none."""
    entry = _entries().get(name)
    if entry is None:
        valid = ", ".join(provider_names())
        raise ConfigError(f"Unknown provider {name!r}: set HERMES_PROVIDER to one of {valid}.")
    try:
        cls = entry.load()
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"The provider plugin {name!r} ({entry.value}) cannot be loaded: {exc}. "
            "Reinstall the package that provides it, or choose another HERMES_PROVIDER."
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, Provider)):
        raise ConfigError(
            f"The provider plugin {name!r} ({entry.value}) is not a hermes Provider class."
        )
    return cls


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
