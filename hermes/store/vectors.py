"""Message vectors: int8 BLOBs in ``message_vectors``, searched by a two-stage numpy scan.

Storage: each unit vector is scaled so its largest component is 127 and kept
as int8 (256 bytes for the local model's 256 dimensions, a quarter of
float32). Cosine similarity is unaffected by the scale, and int8 rounding
moves it by well under 0.01.

Search at a million messages within a few tens of milliseconds, without an
extension (this Python's sqlite3 cannot load one):

1. Coarse: every process keeps, per database and vector space, the vectors
   in memory (see :class:`VectorCache`) with a 64-bit sign code of each
   vector's first 64 components. The query's code is compared to all of them
   by Hamming distance (XOR + popcount: ~10 ms at 1M); the nearest ``RERANK``
   survive. The local model is trained so its leading dimensions carry the
   most meaning (Matryoshka), so the prefix is a fair first cut.
2. Exact: the survivors are scored by cosine on their int8 codes. Below
   ``RERANK`` vectors there is no first stage: the scan is exact.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np
from sqlalchemy import Connection, text

RERANK = 2_000
CODE_DIMS = 64
_BITS = np.array([1 << i for i in range(CODE_DIMS)], dtype=np.uint64)


def quantize(vectors: np.ndarray) -> list[bytes]:
    """int8 codes of unit (or zero) float vectors, one BLOB per row."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1, keepdims=True) if vectors.size else np.zeros((0, 1))
    scaled = vectors / np.where(peak > 0, peak, 1.0) * 127.0
    codes = np.clip(np.rint(scaled), -127, 127).astype(np.int8)
    return [row.tobytes() for row in codes]


def dequantize(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Unit float32 vectors from int8 BLOBs (rows of the wrong size become zero)."""
    out = np.zeros((len(blobs), dim), dtype=np.float32)
    for row, blob in enumerate(blobs):
        if blob is not None and len(blob) == dim:
            out[row] = np.frombuffer(blob, dtype=np.int8)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def sign_codes(vectors: np.ndarray) -> np.ndarray:
    """One uint64 per row: the signs of its first CODE_DIMS components."""
    head = np.asarray(vectors)[:, :CODE_DIMS] > 0
    if head.shape[1] < CODE_DIMS:
        head = np.pad(head, ((0, 0), (0, CODE_DIMS - head.shape[1])))
    return (head.astype(np.uint64) * _BITS).sum(axis=1, dtype=np.uint64)


def space_id(connection: Connection, name: str, dim: int, *, create: bool) -> int | None:
    """The id of the vector space ``name``; created on first use when ``create``."""
    found = connection.execute(
        text("SELECT id FROM embedding_spaces WHERE name = :name"), {"name": name}
    ).scalar()
    if found is None and create:
        found = connection.execute(
            text("INSERT INTO embedding_spaces(name, dim) VALUES (:name, :dim) RETURNING id"),
            {"name": name, "dim": dim},
        ).scalar_one()
    return found


class VectorCache:
    """One database's vectors of one space, in this process's memory.

    ``ids`` stays sorted (one row per message, the newest vector winning), so a
    message's row is found by binary search; ``matrix`` holds the int8 codes
    (256 bytes a message: 256 MB at a million) and ``codes`` the 64-bit sign
    codes of the first stage. :meth:`refresh` loads only what was stored since
    the last call (by ``seq``), so it costs nothing when nothing changed.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, dim), dtype=np.int8)
        self.scale = np.zeros(0, dtype=np.float32)  # 1 / |code|, 0 for a zero vector
        self.codes = np.zeros(0, dtype=np.uint64)
        self.last_seq = 0
        self.lock = threading.Lock()

    def refresh(self, connection: Connection, space: int) -> None:
        with self.lock:
            rows = connection.execute(
                text(
                    "SELECT seq, message_id, vector FROM message_vectors "
                    "WHERE space_id = :space AND seq > :seq ORDER BY seq"
                ),
                {"space": space, "seq": self.last_seq},
            ).all()
            if not rows:
                return
            good = [row for row in rows if row.vector is not None and len(row.vector) == self.dim]
            self.last_seq = rows[-1].seq
            if not good:
                return
            ids = np.fromiter((row.message_id for row in good), np.int64, len(good))
            matrix = np.frombuffer(b"".join(row.vector for row in good), dtype=np.int8).reshape(
                len(good), self.dim
            )
            if len(self.ids) and (ids.min() <= self.ids[-1] or np.any(np.diff(ids) <= 0)):
                # Out of order (a backfill of old messages, an edited message): merge,
                # keeping each message's newest vector.
                ids = np.concatenate([self.ids, ids])
                matrix = np.concatenate([self.matrix, matrix])
                newest_first = np.arange(len(ids))[::-1]
                unique, first = np.unique(ids[newest_first], return_index=True)
                keep = newest_first[first]
                self.ids, self.matrix = unique, matrix[keep]
            elif not len(self.ids) and np.any(np.diff(ids) <= 0):
                order = np.argsort(ids, kind="stable")
                self.ids, self.matrix = ids[order], matrix[order]
            else:
                self.ids = np.concatenate([self.ids, ids])
                self.matrix = np.concatenate([self.matrix, matrix])
            norms = np.linalg.norm(self.matrix.astype(np.float32), axis=1)
            self.scale = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0).astype(
                np.float32
            )
            self.codes = sign_codes(self.matrix)

    def nearest(
        self, query: np.ndarray, count: int, band: tuple[int, int] | None = None
    ) -> dict[int, float]:
        """The ``count`` messages most similar to the query, with their cosines."""
        with self.lock:
            ids, matrix, scale, codes = self.ids, self.matrix, self.scale, self.codes
        low, high = 0, len(ids)
        if band is not None:
            low, high = (int(x) for x in np.searchsorted(ids, [band[0], band[1] + 1]))
        if high - low > RERANK:
            distance = np.bitwise_count(codes[low:high] ^ sign_codes(query[None, :])[0])
            rows = np.argpartition(distance, RERANK)[:RERANK] + low
        else:
            rows = np.arange(low, high)
        scores = (matrix[rows].astype(np.float32) @ query.astype(np.float32)) * scale[rows]
        if len(rows) > count:
            best = np.argpartition(-scores, count)[:count]
            rows, scores = rows[best], scores[best]
        return dict(zip(ids[rows].tolist(), scores.tolist(), strict=True))

    def cosines(self, query: np.ndarray, message_ids: Iterable[int]) -> dict[int, float]:
        """The exact cosine of each listed message that has a vector."""
        wanted = np.fromiter(message_ids, np.int64)
        with self.lock:
            ids, matrix, scale = self.ids, self.matrix, self.scale
        if not len(wanted) or not len(ids):
            return {}
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        found = ids[at] == wanted
        rows = at[found]
        scores = (matrix[rows].astype(np.float32) @ query.astype(np.float32)) * scale[rows]
        return dict(zip(wanted[found].tolist(), scores.tolist(), strict=True))


_caches: dict[tuple[str, int], VectorCache] = {}
_caches_lock = threading.Lock()


def cache_for(database: str, space: int, dim: int) -> VectorCache:
    with _caches_lock:
        cache = _caches.get((database, space))
        if cache is None or cache.dim != dim:
            cache = _caches[(database, space)] = VectorCache(dim)
        return cache


def forget(database: str) -> None:
    """Drop a database's in-process vectors (it was replaced or restored)."""
    with _caches_lock:
        for key in [key for key in _caches if key[0] == database]:
            del _caches[key]
