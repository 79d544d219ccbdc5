"""Message vectors: int8 BLOBs in ``message_vectors``, searched by a two-stage numpy scan.

Storage: each unit vector is scaled so its largest component is 127 and kept
as int8 (256 bytes for the local model's 256 dimensions, a quarter of
float32). Cosine similarity is unaffected by the scale, and int8 rounding
moves it by well under 0.01.

Search at a million messages within a few tens of milliseconds, without an
extension (this Python's sqlite3 cannot load one):

1. Coarse: every process keeps, per database and vector space, the ids and a
   64-bit sign code of each vector's first 64 components (8 bytes a message:
   16 MB for a million), refreshed incrementally by ``seq``. The query's code
   is compared to all of them by Hamming distance (XOR + popcount: ~10 ms at
   1M); the nearest ``RERANK`` survive. The local model is trained so its
   leading dimensions carry the most meaning (Matryoshka), so the prefix is a
   fair first cut.
2. Exact: the survivors' full vectors are read by primary key and scored by
   cosine. Below ``RERANK`` vectors there is no first stage at all: the scan is exact.
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


class CoarseIndex:
    """The in-process first stage for one database and space (see module docstring)."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.codes = np.zeros(0, dtype=np.uint64)
        self.last_seq = 0
        self.lock = threading.Lock()

    def refresh(self, connection: Connection, space: int) -> None:
        """Load the vectors stored since the last refresh (cheap when there are none)."""
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
            head = np.zeros((len(rows), CODE_DIMS), dtype=np.int8)
            for n, row in enumerate(rows):
                part = np.frombuffer(row.vector, dtype=np.int8)[:CODE_DIMS]
                head[n, : len(part)] = part
            self.ids = np.concatenate(
                [self.ids, np.fromiter((r.message_id for r in rows), np.int64)]
            )
            self.codes = np.concatenate([self.codes, sign_codes(head)])
            self.last_seq = rows[-1].seq

    def nearest(
        self, query: np.ndarray, count: int, band: tuple[int, int] | None = None
    ) -> np.ndarray:
        """Ids of the ``count`` vectors whose sign codes are nearest the query's."""
        with self.lock:
            ids, codes = self.ids, self.codes
        if band is not None:
            keep = (ids >= band[0]) & (ids <= band[1])
            ids, codes = ids[keep], codes[keep]
        if len(ids) <= count:
            return ids
        distance = np.bitwise_count(codes ^ sign_codes(query[None, :])[0])
        return ids[np.argpartition(distance, count)[:count]]


_indexes: dict[tuple[str, int], CoarseIndex] = {}
_indexes_lock = threading.Lock()


def coarse_index(database: str, space: int) -> CoarseIndex:
    with _indexes_lock:
        return _indexes.setdefault((database, space), CoarseIndex())


def forget(database: str) -> None:
    """Drop a database's in-process indexes (it was replaced or restored)."""
    with _indexes_lock:
        for key in [key for key in _indexes if key[0] == database]:
            del _indexes[key]


def cosines(
    connection: Connection,
    space: int,
    dim: int,
    query: np.ndarray,
    message_ids: Iterable[int],
    filters: str = "",
    params: dict | None = None,
) -> dict[int, float]:
    """Exact cosine of the query with each listed message that has a vector
    (and passes ``filters``, SQL over ``m``, the messages row)."""
    listed = ",".join(str(int(i)) for i in message_ids)  # our own ints
    if not listed:
        return {}
    rows = connection.execute(
        text(
            "SELECT v.message_id, v.vector FROM message_vectors v "
            "JOIN messages m ON m.id = v.message_id "
            f"WHERE v.space_id = :space AND v.message_id IN ({listed}) {filters}"
        ),
        {**(params or {}), "space": space},
    ).all()
    if not rows:
        return {}
    scores = dequantize([row.vector for row in rows], dim) @ query.astype(np.float32)
    return {row.message_id: float(score) for row, score in zip(rows, scores, strict=True)}
