"""What every embedder promises, and the input cleaning they all share."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from hermes.errors import HermesError

# Longer text says no more to a sentence embedder than its beginning does, and a
# megabyte of tool output must not cost a megabyte of tokenizing.
MAX_CHARS = 4_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class EmbeddingError(HermesError):
    """The embedder could not produce vectors (endpoint down, bad answer, no model)."""

    code = "embedding_error"


def clean_text(text: object) -> str:
    """Text an embedder can take: a string without NULs or control characters,
    normalized (NFC), whitespace collapsed, at most MAX_CHARS long."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[: MAX_CHARS * 2]
    text = _CONTROL.sub(" ", unicodedata.normalize("NFC", text))
    # Lone surrogates cannot be encoded for a tokenizer or an HTTP body.
    text = text.encode("utf-8", "replace").decode("utf-8")
    return " ".join(text.split())[:MAX_CHARS]


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero (or non-finite) rows stay zero."""
    vectors = np.nan_to_num(np.asarray(vectors, dtype=np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0)
    return (vectors / safe).astype(np.float32)


class Embedder:
    """Texts in, unit vectors out (float32, one row per text).

    ``space`` names the vector space: vectors from two embedders with different
    spaces are never compared (switching models re-embeds; see ``hermes db reindex``).
    An empty text gets the zero vector, which is similar to nothing.
    """

    space: str = ""
    dim: int = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        cleaned = [clean_text(t) for t in texts]
        out = np.zeros((len(cleaned), self.dim), dtype=np.float32)
        todo = [i for i, t in enumerate(cleaned) if t]
        if todo:
            vectors = self._embed([cleaned[i] for i in todo])
            if vectors.shape != (len(todo), self.dim):
                raise EmbeddingError(
                    f"The embedder returned vectors of shape {vectors.shape}, expected "
                    f"({len(todo)}, {self.dim})."
                )
            out[todo] = normalize_rows(vectors)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Raw vectors for non-empty, cleaned texts."""
        raise NotImplementedError
