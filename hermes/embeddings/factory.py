"""Choosing the embedder from the configuration (HERMES_EMBEDDINGS and friends).

``local`` (the default) needs nothing but the installed packages, and uses two
shipped models through the same seam, each where it fits:

- memory search: WordLlama (0.1 ms a message), because a history of a million
  messages must be embedded in minutes and a query embedded in well under the
  50 ms search budget;
- skill selection: all-MiniLM-L6-v2, a real sentence encoder, because a few
  hundred skills are embedded once (then cached) and paraphrase is the whole
  problem there ("I pasted our token in a chat" -> rotate-leaked-credentials).

``minilm`` uses MiniLM for memory too (better recall, a slower backfill).
``endpoint`` uses HERMES_EMBEDDINGS_URL or, without it, the configured
OpenAI-compatible provider, for both. ``off`` disables the semantic layer.
"""

from __future__ import annotations

from typing import Literal

from hermes.config import Config
from hermes.embeddings.base import Embedder
from hermes.errors import ConfigError

DEFAULT_ENDPOINT_MODEL = "text-embedding-3-small"

Purpose = Literal["memory", "skills"]


def make_embedder(config: Config, purpose: Purpose = "memory") -> Embedder | None:
    """The configured embedder for memory search or skill selection; None when off."""
    choice = config.embeddings
    if choice == "off":
        return None
    if choice == "minilm" or (choice == "local" and purpose == "skills"):
        from hermes.embeddings.minilm import shared_minilm

        return shared_minilm()
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
