"""Choosing the embedder from the configuration (HERMES_EMBEDDINGS and friends)."""

from __future__ import annotations

from hermes.config import Config
from hermes.embeddings.base import Embedder
from hermes.errors import ConfigError

DEFAULT_ENDPOINT_MODEL = "text-embedding-3-small"


def make_embedder(config: Config) -> Embedder | None:
    """The configured embedder; None when the semantic layer is switched off.

    ``HERMES_EMBEDDINGS=local`` (the default) uses the model shipped with the
    package; ``endpoint`` uses ``HERMES_EMBEDDINGS_URL`` or, without it, the
    configured OpenAI-compatible provider's base URL and key.
    """
    choice = config.embeddings
    if choice == "off":
        return None
    if choice == "local":
        from hermes.embeddings.local import shared_local

        return shared_local()
    from hermes.embeddings.endpoint import EndpointEmbedder

    url = config.embeddings_url
    key = config.embeddings_api_key
    if not url:
        if config.provider not in ("openai", "openrouter"):
            raise ConfigError(
                "HERMES_EMBEDDINGS=endpoint needs HERMES_EMBEDDINGS_URL, or an OpenAI-compatible "
                "provider (the Anthropic API has no embeddings endpoint)."
            )
        url, key = config.base_url, key or config.api_key
    return EndpointEmbedder(url, config.embeddings_model or DEFAULT_ENDPOINT_MODEL, key)
