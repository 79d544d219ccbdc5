"""Hermes' memory: every session and message in SQLite, searchable with FTS5."""

from hermes.store.bulk import RecordOutcome, SessionRecord
from hermes.store.store import Store
from hermes.store.values import SearchHit, SessionInfo, StoredMessage

__all__ = [
    "RecordOutcome",
    "SearchHit",
    "SessionInfo",
    "SessionRecord",
    "Store",
    "StoredMessage",
]
