"""Adding whole conversations at once (imports), fast and all-or-nothing.

A conversation already stored (same uid or external id) is never duplicated.
When a newer export of it holds more messages and what is stored is exactly
the start of it, only the new messages are appended ("extended"); a stored
conversation that has diverged (an earlier message edited in the other tool,
or the conversation continued here) is left as it is and reported as
"diverged", because nothing in an import ever deletes or rewrites what Hermes
already has.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, insert, or_, select, update

from hermes.messages import Message
from hermes.store import deferred_index
from hermes.store.models import messages_table, sessions_table
from hermes.store.values import aware_utc, db_time, tool_calls_from_json, tool_calls_to_json

ADDED = "added"
EXTENDED = "extended"
SKIPPED = "skipped"
DIVERGED = "diverged"

_INSERT_SESSIONS = insert(sessions_table).returning(
    sessions_table.c.id, sort_by_parameter_order=True
)
_INSERT_MESSAGE_ROWS = (
    "INSERT INTO messages (session_id, position, role, content, tool_calls, tool_call_id, "
    "tool_name, is_error, context, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True)
class SessionRecord:
    """A whole conversation to add at once (imports). ``messages`` pairs each
    message with its timestamp."""

    title: str | None
    created_at: datetime
    updated_at: datetime
    messages: list[tuple[Message, datetime]] = field(default_factory=list)
    source: str = "import"
    uid: str | None = None
    external_id: str | None = None
    summary: str | None = None
    model: str | None = None
    system_prompt: str | None = None


@dataclass(frozen=True)
class RecordOutcome:
    """What adding one record did: ``action`` is added, extended or skipped;
    ``messages`` counts the messages written."""

    action: str
    session_id: int | None
    messages: int = 0


@dataclass(frozen=True)
class _Stored:
    session_id: int
    message_count: int
    updated_at: datetime


def add_records(connection: Connection, records: list[SessionRecord]) -> list[RecordOutcome]:
    """Add, extend or skip each record inside the caller's transaction.

    The search indexes are written once for the whole batch (see deferred_index.py).
    """
    with deferred_index.deferred(connection):
        return _add_records(connection, records)


def _add_records(connection: Connection, records: list[SessionRecord]) -> list[RecordOutcome]:
    stored = _stored_matches(connection, records)
    fresh: list[SessionRecord] = []
    outcomes: dict[int, RecordOutcome] = {}
    claimed: set[str] = set()  # ids seen earlier in this batch: the first one wins
    for record in records:
        keys = {key for key in (record.uid, record.external_id) if key}
        match = next((stored[key] for key in keys if key in stored), None)
        if keys & claimed:
            outcomes[id(record)] = RecordOutcome(SKIPPED, match.session_id if match else None)
        elif match is not None:
            outcomes[id(record)] = _extend(connection, match, record)
        else:
            fresh.append(record)
        claimed |= keys
    if fresh:
        for record, session_id in zip(fresh, _insert(connection, fresh), strict=True):
            outcomes[id(record)] = RecordOutcome(ADDED, session_id, len(record.messages))
    return [outcomes[id(record)] for record in records]


def _stored_matches(connection: Connection, records: list[SessionRecord]) -> dict[str, _Stored]:
    s = sessions_table.c
    uids = [r.uid for r in records if r.uid]
    external_ids = [r.external_id for r in records if r.external_id]
    if not uids and not external_ids:
        return {}
    rows = connection.execute(
        select(s.id, s.uid, s.external_id, s.message_count, s.updated_at).where(
            or_(s.uid.in_(uids), s.external_id.in_(external_ids))
        )
    )
    found: dict[str, _Stored] = {}
    for row in rows:
        info = _Stored(row.id, row.message_count, row.updated_at)
        for key in (row.uid, row.external_id):
            if key:
                found[key] = info
    return found


def _extend(connection: Connection, stored: _Stored, record: SessionRecord) -> RecordOutcome:
    """Append the record's extra messages when what is stored is exactly its beginning."""
    m = messages_table.c
    if len(record.messages) <= stored.message_count:
        # Nothing new, unless the export branched off earlier (an edited message):
        # then its last message differs from the stored one at the same place.
        if not record.messages:
            return RecordOutcome(SKIPPED, stored.session_id)
        position = len(record.messages) - 1
        row = connection.execute(
            select(m.role, m.content, m.tool_calls, m.tool_call_id).where(
                m.session_id == stored.session_id, m.position == position
            )
        ).first()
        same = row is not None and _key(row) == _incoming_key(record.messages[position][0])
        return RecordOutcome(SKIPPED if same else DIVERGED, stored.session_id)
    rows = connection.execute(
        select(m.role, m.content, m.tool_calls, m.tool_call_id)
        .where(m.session_id == stored.session_id)
        .order_by(m.position)
    ).all()
    have = [_key(row) for row in rows]
    incoming = [_incoming_key(message) for message, _ in record.messages[: len(have)]]
    if len(have) != stored.message_count or have != incoming:
        return RecordOutcome(DIVERGED, stored.session_id)
    extra = record.messages[len(have) :]
    connection.exec_driver_sql(
        _INSERT_MESSAGE_ROWS,
        [
            _message_row(stored.session_id, position, message, created_at)
            for position, (message, created_at) in enumerate(extra, start=len(have))
        ],
    )
    connection.execute(
        update(sessions_table)
        .where(sessions_table.c.id == stored.session_id)
        .values(
            message_count=len(record.messages),
            updated_at=max(aware_utc(stored.updated_at), aware_utc(record.updated_at)),
        )
    )
    return RecordOutcome(EXTENDED, stored.session_id, len(extra))


def _key(row) -> tuple:
    return (row.role, row.content, tool_calls_from_json(row.tool_calls), row.tool_call_id)


def _incoming_key(message: Message) -> tuple:
    return (message.role, message.content or "", message.tool_calls, message.tool_call_id)


def _insert(connection: Connection, records: list[SessionRecord]) -> list[int]:
    # Two statements per batch, not per conversation: SQLAlchemy's
    # "insertmanyvalues" returns the new ids in parameter order.
    session_ids = list(
        connection.execute(
            _INSERT_SESSIONS,
            [
                {
                    "uid": record.uid or uuid.uuid4().hex,
                    "external_id": record.external_id,
                    "title": record.title,
                    "source": record.source,
                    "summary": record.summary,
                    "model": record.model,
                    "system_prompt": record.system_prompt,
                    "created_at": record.created_at,
                    "updated_at": record.updated_at,
                    "message_count": len(record.messages),
                }
                for record in records
            ],
        ).scalars()
    )
    rows = [
        _message_row(session_id, position, message, created_at)
        for session_id, record in zip(session_ids, records, strict=True)
        for position, (message, created_at) in enumerate(record.messages)
    ]
    if rows:
        # Plain tuples through the driver: at import sizes SQLAlchemy's per-row
        # type processing costs about a third of the whole insert.
        connection.exec_driver_sql(_INSERT_MESSAGE_ROWS, rows)
    return session_ids


def _message_row(session_id: int, position: int, message: Message, created_at: datetime) -> tuple:
    return (
        session_id,
        position,
        message.role,
        message.content or "",
        tool_calls_to_json(message.tool_calls),
        message.tool_call_id,
        message.tool_name,
        int(bool(message.is_error)),
        message.context,
        db_time(created_at),
    )
