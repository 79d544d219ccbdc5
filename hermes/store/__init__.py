"""Hermes' memory: every session and message in SQLite, searchable with FTS5."""

from hermes.store.store import SessionRecord, Store
from hermes.store.values import SearchHit, SessionInfo, StoredMessage

__all__ = ["SearchHit", "SessionInfo", "SessionRecord", "Store", "StoredMessage"]
