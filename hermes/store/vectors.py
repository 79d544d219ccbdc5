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
   by Hamming distance (XOR + popcount: about 1 ms at 753k vectors); the
   nearest ``RERANK`` survive. The local model is trained so its leading
   dimensions carry the most meaning (Matryoshka), so the prefix is a fair
   first cut. The stage's work arrays are reused (see :class:`Scratch`).
2. Exact: the survivors are scored by cosine on their int8 codes. Below
   ``RERANK`` vectors there is no first stage: the scan is exact.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from contextlib import contextmanager

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
        self._scratch = Scratch()

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
            with self._scratch.take(high - low) as (part, distance, mask):
                _hamming(codes[low:high], sign_codes(query[None, :])[0], part, distance)
                rows = _closest(distance, RERANK, mask) + low
        else:
            rows = np.arange(low, high)
        scores = _scores(matrix, scale, rows, query)
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
        scores = _scores(matrix, scale, rows, query)
        return dict(zip(wanted[found].tolist(), scores.tolist(), strict=True))


def _scores(matrix: np.ndarray, scale: np.ndarray, rows: np.ndarray, query: np.ndarray):
    """Cosines of ``matrix[rows]`` to the unit ``query``, converted to float32 64 rows at
    a time: each piece stays under the mmap threshold (see Scratch), five times faster
    than converting 2,000 rows at once."""
    query = query.astype(np.float32)
    out = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), 64):
        piece = rows[start : start + 64]
        out[start : start + len(piece)] = matrix[piece].astype(np.float32) @ query
    return out * scale[rows]


def _hamming(codes: np.ndarray, query: np.uint64, part: np.ndarray, out: np.ndarray) -> None:
    """``out[i]`` = Hamming distance of ``codes[i]`` to ``query``, XOR-ed a chunk at a time
    into ``part`` so no array of the codes' size is made (see Scratch)."""
    step = len(part)
    for start in range(0, len(codes), step):
        chunk = codes[start : start + step]
        np.bitwise_xor(chunk, query, out=part[: len(chunk)])
        np.bitwise_count(part[: len(chunk)], out=out[start : start + len(chunk)])


def _closest(distance: np.ndarray, count: int, mask: np.ndarray) -> np.ndarray:
    """Positions of the ``count`` smallest Hamming distances (0..64), ties at the cut
    taken in order; ``mask`` is scratch of the same length.

    The cut (the smallest distance with ``count`` rows at or below it) is found by
    binary search over the 65 possible values, counting into ``mask``: seven
    passes that allocate nothing beat argpartition (11 ms at 753k rows) and
    bincount (which casts the distances to int64 first) several times over."""
    low, high = 0, CODE_DIMS
    while low < high:
        middle = (low + high) // 2
        if np.count_nonzero(np.less_equal(distance, middle, out=mask)) >= count:
            high = middle
        else:
            low = middle + 1
    below = np.flatnonzero(np.less(distance, low, out=mask))
    # Ties at the cut are common (a tenth of the rows): take the first ones,
    # looking at a growing stretch rather than listing them all.
    ties, need, start, step = [], count - len(below), 0, max(4 * (count - len(below)), 4096)
    while need > 0 and start < len(distance):
        stretch = slice(start, start + step)
        found = np.flatnonzero(np.equal(distance[stretch], low, out=mask[stretch]))[:need] + start
        ties.append(found)
        need -= len(found)
        start += step
        step *= 2
    return np.concatenate([below, *ties])


class Scratch:
    """Work arrays of the coarse stage, reused between searches.

    The server fixes glibc's mmap threshold (see hermes/allocator.py), so every
    temporary array over 128 KB is fresh memory from the kernel, faulted in page
    by page and handed back when freed: at a million vectors the coarse stage's
    temporaries (10 bytes a vector) cost more than the arithmetic on them.
    One set is kept and grown as the vectors grow; a search running beside
    another gets a set of its own for the while.
    """

    CHUNK = 16_384  # codes XOR-ed at a time: 128 KB of uint64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @contextmanager
    def take(self, rows: int):
        """(XOR chunk, distances, mask) with room for ``rows`` vectors; given back after."""
        with self._lock:
            arrays, self._kept = self._kept, None
        if arrays is None or len(arrays[1]) < rows:
            room = rows + rows // 4
            arrays = (
                np.empty(self.CHUNK, np.uint64),
                np.empty(room, np.uint8),
                np.empty(room, bool),
            )
        try:
            part, distance, mask = arrays
            yield part, distance[:rows], mask[:rows]
        finally:
            with self._lock:
                if self._kept is None or len(self._kept[1]) < len(arrays[1]):
                    self._kept = arrays


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
