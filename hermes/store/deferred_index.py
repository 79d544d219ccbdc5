"""Bulk writes: the full-text indexes written once per batch, not once per message.

Two triggers index a new message: ``messages_ai`` (its own words,
``messages_fts``) and ``messages_context_ai`` (its context, which holds the
start of its neighbours, so a new message rewrites its predecessor's row as
well). One message at a time that is cheap. Inside one big transaction of
single-row inserts it is ruinous: FTS5 writes its pending changes to disk as
a new segment whenever a statement opens a savepoint (every insert that fires
a trigger does) and whenever a row goes back to a smaller rowid (every
rewrite of the predecessor does), so every message became a tiny segment of
its own (imports fell from ~22,000 to a few hundred messages a second, and the
fragmented index slowed search too).

So bulk writers (imports, benches) wrap their inserts in :func:`deferred`: both
triggers skip their work (``WHEN hermes_index_live()``, migration 0009), and at
the end one ``INSERT ... SELECT`` per index writes the rows of the new
messages, and of the older messages whose next neighbour just arrived, in
rowid order. The switch is per thread and the index rows are written inside
the caller's transaction, so a failed import leaves neither missing rows nor a
trigger switched off.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, text

_state = threading.local()

# Messages stored before the batch whose next neighbour is in it: their context changed.
_PREVIOUS = """
    SELECT p.id FROM messages n
    JOIN messages p ON p.session_id = n.session_id AND p.position = n.position - 1
    WHERE n.id > :before AND p.id <= :before
"""


def live() -> int:
    """1 unless this thread is inside :func:`deferred` (asked by the insert triggers)."""
    return 0 if getattr(_state, "deferred", False) else 1


def register(dbapi_connection) -> None:
    """Make ``hermes_index_live()`` available to this connection's triggers."""
    # Not deterministic: its answer changes between statements.
    dbapi_connection.create_function("hermes_index_live", 0, live)


@contextmanager
def deferred(connection: Connection) -> Iterator[None]:
    """Insert messages inside this block; their index rows are written once, at its end.

    Only for inserts of new messages on ``connection``, which must be in a write
    transaction (so no other writer can add messages meanwhile); updates and
    deletes inside the block keep their own triggers.
    """
    before = connection.execute(text("SELECT coalesce(max(id), 0) FROM messages")).scalar()
    _state.deferred = True
    try:
        yield
    finally:
        _state.deferred = False
    index_after(connection, before)


def index_after(connection: Connection, before: int) -> None:
    """Index every message with an id above ``before``, and re-index the context of
    the older messages they follow, each index in ascending rowid order."""
    params = {"before": before}
    connection.execute(
        text(
            "INSERT INTO messages_fts(rowid, body, tool_output) "
            "SELECT id, body, tool_output FROM messages_search_source "
            "WHERE id > :before ORDER BY id"
        ),
        params,
    )
    connection.execute(
        text(f"DELETE FROM messages_context_fts WHERE rowid IN ({_PREVIOUS})"), params
    )
    # Two statements, so each reads its rows by id (an OR would scan every message).
    connection.execute(
        text(
            "INSERT INTO messages_context_fts(rowid, context, literal) "
            "SELECT id, context, literal FROM messages_context_source "
            f"WHERE id IN ({_PREVIOUS}) ORDER BY id"
        ),
        params,
    )
    connection.execute(
        text(
            "INSERT INTO messages_context_fts(rowid, context, literal) "
            "SELECT id, context, literal FROM messages_context_source "
            "WHERE id > :before ORDER BY id"
        ),
        params,
    )
