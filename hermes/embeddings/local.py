"""The offline embedder: WordLlama's static token embeddings, from its own wheel.

Why this model: it is the only one found that works right after ``pip install``
with no download and no torch. The ``wordllama`` wheel ships the 256-d
``l2_supercat`` weights (16 MB, float16) and their tokenizer; inference is a
table lookup and a mean, ~0.1 ms per message, so embedding happens with the
message and a million-message backfill takes minutes, not hours. fastembed and
sentence-transformers models are better but need a model hub or gigabytes of
CUDA libraries. (Users with a better model point HERMES_EMBEDDINGS_URL at it.)

We read the shipped files ourselves rather than calling ``WordLlama.load()``:
it looks for ``tokenizer/`` while the wheel has ``tokenizers/``, and importing
``wordllama.inference`` reconfigures the root logger.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np

from hermes.embeddings.base import Embedder, EmbeddingError

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
MAX_TOKENS = 512


def wordllama_folder() -> Path:
    """Where the wordllama package is installed, without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            "The local embedding model is missing: `pip install wordllama` (a dependency of "
            "hermes-agent), or set HERMES_EMBEDDINGS=off."
        )
    return Path(next(iter(spec.submodule_search_locations)))


class LocalEmbedder(Embedder):
    space = "wordllama-l2-supercat-256"
    dim = 256

    def __init__(self, folder: Path | None = None):
        folder = folder or wordllama_folder()
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

            tensors = load_file(str(folder / WEIGHTS))
            self.table = np.ascontiguousarray(tensors["embedding.weight"], dtype=np.float32)
            self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
        except (OSError, KeyError, ValueError, ImportError, Exception) as exc:
            raise EmbeddingError(
                f"Cannot load the local embedding model from {folder}: {exc}"
            ) from None
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        # The Rust tokenizer is thread-safe, but keep batches from interleaving.
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        last = self.table.shape[0] - 1
        for row, encoding in enumerate(encodings):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, last)
            if ids.size:
                out[row] = self.table[ids].mean(axis=0)
        return out


_shared: LocalEmbedder | None = None
_shared_lock = threading.Lock()


def shared_local() -> LocalEmbedder:
    """One loaded model per process (loading takes ~0.3 s and 64 MB)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = LocalEmbedder()
        return _shared
