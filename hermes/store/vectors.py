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

from hermes.blas import single_blas_thread

single_blas_thread()  # numpy (and BLAS) arrive with this module: see hermes/blas.py

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
    (256 bytes a message: 256 MB at a million), ``scale`` their inverse norms and
    ``codes`` the 64-bit sign codes of the first stage.

    :meth:`refresh` loads only what was stored since the last call (by ``seq``,
    the table's rowid), so it costs a lookup when nothing changed. New messages'
    vectors (the usual case: the background indexer's batches) are appended into
    spare room, and only their norms and codes are worked out: a million-row
    matrix is neither copied nor converted for a few new rows. A vector that
    arrives out of order (a backfill of older messages, an edited message) makes
    fresh arrays instead; searches running meanwhile keep the ones they took.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.count = 0
        # Buffers with room to grow; the first ``count`` rows are in use.
        self._ids = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, dim), dtype=np.int8)
        self._scale = np.zeros(0, dtype=np.float32)  # 1 / |code|, 0 for a zero vector
        self._codes = np.zeros(0, dtype=np.uint64)
        self.last_seq = 0
        self.lock = threading.Lock()

    @property
    def ids(self) -> np.ndarray:
        return self._ids[: self.count]

    def _snapshot(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Views of the rows in use; rows appended later never change them."""
        with self.lock:
            n = self.count
            return self._ids[:n], self._matrix[:n], self._scale[:n], self._codes[:n]

    def refresh(self, connection: Connection, space: int) -> None:
        with self.lock:
            # ``+space_id``: walk the rowid range after last_seq, not the space's whole
            # index (which took 120 ms at a million vectors to find nothing new).
            rows = connection.execute(
                text(
                    "SELECT seq, message_id, vector FROM message_vectors "
                    "WHERE seq > :seq AND +space_id = :space ORDER BY seq"
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
            fresh = (ids, matrix, _scales(matrix), sign_codes(matrix))
            n = self.count
            in_order = not np.any(np.diff(ids) <= 0)
            if in_order and (n == 0 or ids[0] > self._ids[n - 1]):
                buffers = (self._ids, self._matrix, self._scale, self._codes)
                self._ids, self._matrix, self._scale, self._codes = (
                    _appended(buffer, n, part) for buffer, part in zip(buffers, fresh, strict=True)
                )
                self.count = n + len(ids)
                return
            # Out of order: merge, keeping each message's newest vector.
            merged = [
                np.concatenate([old[:n], part])
                for old, part in zip(
                    (self._ids, self._matrix, self._scale, self._codes), fresh, strict=True
                )
            ]
            newest_first = np.arange(len(merged[0]))[::-1]
            _unique, first = np.unique(merged[0][newest_first], return_index=True)
            keep = newest_first[first]
            self._ids, self._matrix, self._scale, self._codes = (part[keep] for part in merged)
            self.count = len(keep)

    def nearest(
        self, query: np.ndarray, count: int, band: tuple[int, int] | None = None
    ) -> dict[int, float]:
        """The ``count`` messages most similar to the query, with their cosines."""
        ids, matrix, scale, codes = self._snapshot()
        low, high = 0, len(ids)
        if band is not None:
            low, high = (int(x) for x in np.searchsorted(ids, [band[0], band[1] + 1]))
        if high - low > RERANK:
            distance = np.bitwise_count(codes[low:high] ^ sign_codes(query[None, :])[0])
            rows = _closest(distance, RERANK) + low
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
        ids, matrix, scale, _codes = self._snapshot()
        if not len(wanted) or not len(ids):
            return {}
        at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
        found = ids[at] == wanted
        rows = at[found]
        scores = (matrix[rows].astype(np.float32) @ query.astype(np.float32)) * scale[rows]
        return dict(zip(wanted[found].tolist(), scores.tolist(), strict=True))


def _closest(distance: np.ndarray, count: int) -> np.ndarray:
    """Positions of ``count`` smallest Hamming distances (0..64), ties at the cut taken in
    order. Counting the 65 possible values is a few times faster than argpartition over
    a million of them, which was most of the semantic side's time."""
    histogram = np.bincount(distance, minlength=CODE_DIMS + 1)
    cut = int(np.searchsorted(np.cumsum(histogram), count))  # the distance where count is reached
    below = np.flatnonzero(distance < cut)
    at_cut = np.flatnonzero(distance == cut)[: count - len(below)]
    return np.concatenate([below, at_cut])


def _scales(matrix: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """1 / norm of each int8 row (0 for a zero row), converted a chunk at a time so a
    first load of a million rows never holds them all as float32 (1 GB)."""
    out = np.zeros(len(matrix), dtype=np.float32)
    for start in range(0, len(matrix), chunk):
        part = matrix[start : start + chunk].astype(np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", part, part))
        out[start : start + chunk] = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
    return out


def _appended(buffer: np.ndarray, used: int, rows: np.ndarray) -> np.ndarray:
    """``buffer`` (its first ``used`` rows filled) with ``rows`` after them. Full, it is
    replaced by one half as large again, so appends copy the old rows rarely."""
    need = used + len(rows)
    if need > len(buffer):
        grown = np.empty((max(need, len(buffer) * 3 // 2 + 1024), *buffer.shape[1:]), buffer.dtype)
        grown[:used] = buffer[:used]
        buffer = grown
    buffer[used:need] = rows
    return buffer


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
