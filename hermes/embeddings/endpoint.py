"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint, via the openai SDK.

Works with OpenAI itself and with local servers that speak the same API
(Ollama, LM Studio, vLLM, llama.cpp). The vector size is whatever the model
returns; it is learnt from the first answer.
"""

from __future__ import annotations

import hashlib

import numpy as np

from hermes.embeddings.base import Embedder, EmbeddingError

BATCH = 64
TIMEOUT = 30.0


class EndpointEmbedder(Embedder):
    def __init__(self, base_url: str | None, model: str, api_key: str | None, *, dim: int = 0):
        import openai

        self.model = model
        self.base_url = base_url
        # The space names the model and the server, never the key.
        where = hashlib.sha256((base_url or "openai").encode()).hexdigest()[:8]
        self.space = f"endpoint:{model}@{where}"
        self.dim = dim
        self._client = openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=TIMEOUT, max_retries=1
        )

    def embed(self, texts):
        if not self.dim and any(texts):
            self.dim = self._probe()
        if not self.dim:
            return np.zeros((len(texts), 0), dtype=np.float32)
        return super().embed(texts)

    def _probe(self) -> int:
        return int(self._request(["dimension probe"]).shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        parts = [self._request(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def _request(self, texts: list[str]) -> np.ndarray:
        import openai

        try:
            response = self._client.embeddings.create(
                model=self.model, input=texts, encoding_format="float"
            )
        except openai.APIStatusError as exc:
            raise EmbeddingError(
                f"The embeddings endpoint answered {exc.status_code} for model {self.model!r}; "
                "check HERMES_EMBEDDINGS_URL and HERMES_EMBEDDINGS_MODEL."
            ) from None
        except openai.APIError as exc:
            raise EmbeddingError(
                f"The embeddings endpoint could not be reached ({type(exc).__name__}); "
                "check HERMES_EMBEDDINGS_URL."
            ) from None
        data = sorted(response.data or [], key=lambda item: item.index)
        try:
            vectors = np.asarray([item.embedding for item in data], dtype=np.float32)
        except (TypeError, ValueError):
            raise EmbeddingError(
                "The embeddings endpoint returned something that is not vectors."
            ) from None
        if vectors.ndim != 2 or len(vectors) != len(texts) or not vectors.shape[1]:
            raise EmbeddingError(
                f"The embeddings endpoint returned {len(vectors)} vectors for {len(texts)} texts."
            )
        return vectors
