"""The in-process vector cache: what it loads, how it grows, and what a search sees meanwhile."""

from __future__ import annotations

import numpy as np
from sqlalchemy import event, text

from hermes.store import vectors
from hermes.store.engine import read_transaction, write_transaction

DIM = 8


def _unit(rng, count):
    raw = rng.normal(size=(count, DIM)).astype(np.float32)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def _put(store, space, rows):
    """Store (message_id, vector) rows as the indexer does (one seq each, in order)."""
    with write_transaction(store.engine) as connection:
        for message_id, vector in rows:
            connection.execute(
                text(
                    "INSERT INTO message_vectors(space_id, message_id, vector) "
                    "VALUES (:space, :id, :vector) "
                    "ON CONFLICT(space_id, message_id) DO UPDATE SET vector = excluded.vector, "
                    "seq = (SELECT max(seq) + 1 FROM message_vectors)"
                ),
                {"space": space, "id": message_id, "vector": vectors.quantize(vector[None])[0]},
            )


def _refresh(store, cache, space):
    with read_transaction(store.engine) as connection:
        cache.refresh(connection, space)


def _setup(store, count):
    session = store.create_session()
    from hermes.messages import Message

    ids = [store.add_message(session.id, Message("user", f"note {n}")).id for n in range(count)]
    with write_transaction(store.engine) as connection:
        space = vectors.space_id(connection, "test-space", DIM, create=True)
    return ids, space


def _brute(found: dict, expected: dict[int, np.ndarray], query) -> None:
    for message_id, cosine in found.items():
        assert abs(cosine - float(expected[message_id] @ query)) < 0.02


def test_appends_grow_in_place_and_keep_earlier_snapshots(store):
    rng = np.random.default_rng(1)
    ids, space = _setup(store, 3000)
    vecs = dict(zip(ids, _unit(rng, len(ids)), strict=True))
    cache = vectors.VectorCache(DIM)
    _put(store, space, [(i, vecs[i]) for i in ids[:2000]])
    _refresh(store, cache, space)
    assert cache.count == 2000 and list(cache.ids) == ids[:2000]
    before = cache._snapshot()
    buffers = []
    for start in range(2000, 3000, 16):  # the background indexer's batches
        _put(store, space, [(i, vecs[i]) for i in ids[start : start + 16]])
        _refresh(store, cache, space)
        buffers.append(cache._matrix)
    assert cache.count == 3000 and list(cache.ids) == ids
    # 63 batches, and the matrix was made anew only when full (by half again), not per batch...
    assert len({id(buffer) for buffer in buffers}) <= 2
    # ...and a search that took its arrays before the appends still sees its 2,000 rows.
    assert len(before[0]) == 2000 and list(before[0]) == ids[:2000]
    query = _unit(rng, 1)[0]
    found = cache.nearest(query, 10)
    _brute(found, vecs, query)
    exact = sorted(ids, key=lambda i: -float(vecs[i] @ query))[:10]
    assert set(found) == set(exact)
    # The first stage (sign codes of the appended rows too) keeps the nearest.
    assert set(cache.cosines(query, exact)) == set(exact)


def test_out_of_order_vectors_merge_and_the_newest_wins(store):
    rng = np.random.default_rng(2)
    ids, space = _setup(store, 50)
    vecs = dict(zip(ids, _unit(rng, len(ids)), strict=True))
    cache = vectors.VectorCache(DIM)
    _put(store, space, [(i, vecs[i]) for i in ids[25:]])
    _refresh(store, cache, space)
    # A backfill of older messages, then an edited message's new vector.
    _put(store, space, [(i, vecs[i]) for i in ids[:25]])
    edited = _unit(rng, 1)[0]
    _put(store, space, [(ids[30], edited)])
    vecs[ids[30]] = edited
    _refresh(store, cache, space)
    assert list(cache.ids) == ids  # sorted, one row per message
    cosines = cache.cosines(edited, [ids[30]])
    assert abs(cosines[ids[30]] - 1.0) < 0.02
    query = _unit(rng, 1)[0]
    _brute(cache.nearest(query, 50), vecs, query)


def test_nothing_new_is_a_rowid_lookup(store):
    # The refresh before every search must walk the rowids after the last one it saw,
    # not the space's whole index (120 ms at a million vectors, to find nothing).
    _ids, space = _setup(store, 1)
    seen = []

    def capture(_conn, _cursor, statement, parameters, _context, _many):
        if "message_vectors" in statement:
            seen.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", capture)
    try:
        _refresh(store, vectors.VectorCache(DIM), space)
    finally:
        event.remove(store.engine, "before_cursor_execute", capture)
    ((statement, parameters),) = seen
    with read_transaction(store.engine) as connection:
        plan = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
    assert any("INTEGER PRIMARY KEY" in row[-1] for row in plan), plan


def test_scales_match_the_norms():
    rng = np.random.default_rng(3)
    matrix = rng.integers(-127, 128, size=(70_000, DIM), dtype=np.int8)
    matrix[5] = 0
    scales = vectors._scales(matrix, chunk=4096)
    norms = np.linalg.norm(matrix.astype(np.float32), axis=1)
    assert scales[5] == 0.0
    mask = norms > 0
    assert np.allclose(scales[mask], 1.0 / norms[mask], rtol=1e-5)


def test_the_first_stage_keeps_the_smallest_distances():
    rng = np.random.default_rng(4)
    mask = np.empty(50_000, dtype=bool)
    for spread in (3, 20, 65):  # heavy ties at the cut, and a wide spread
        distance = rng.integers(0, spread, size=50_000).astype(np.uint8)
        rows = vectors._closest(distance, 2_000, mask)
        assert len(rows) == 2_000 and len(np.unique(rows)) == 2_000
        rest = np.setdiff1d(np.arange(len(distance)), rows)
        assert distance[rows].max() <= distance[rest].min()
        # Ties at the cut are taken in order: the first ones.
        cut = distance[rows].max()
        ties = np.flatnonzero(distance == cut)
        assert set(rows[distance[rows] == cut]) == set(ties[: np.sum(distance[rows] == cut)])
    # Sparse ties far down the array (the stretch searched keeps growing).
    distance = np.full(50_000, 40, dtype=np.uint8)
    distance[:1_990] = 1
    distance[[30_000, 49_999, 45_000, 20_000]] = 2
    rows = vectors._closest(distance, 1_993, mask)
    assert sorted(rows[1_990:]) == [20_000, 30_000, 45_000]


def test_the_first_stage_is_the_exact_hamming_distance():
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 2**63, size=40_000, dtype=np.uint64) * 2 + 1
    query = np.uint64(0xF0F0F0F0F0F0F0F1)
    part, out = np.empty(4096, np.uint64), np.empty(40_000, np.uint8)
    vectors._hamming(codes, query, part, out)
    assert np.array_equal(out, np.bitwise_count(codes ^ query))


def test_searches_reuse_their_scratch_and_concurrent_ones_get_their_own():
    scratch = vectors.Scratch()
    with scratch.take(10_000) as (_, first, _mask), scratch.take(10_000) as (_, beside, _mask2):
        assert not np.shares_memory(first, beside)
    with scratch.take(9_000) as (_, again, _mask):
        assert np.shares_memory(again, first) or np.shares_memory(again, beside)
        assert len(again) == 9_000
    with scratch.take(50_000) as (_, bigger, _mask):
        assert len(bigger) == 50_000
