"""The memory store: sessions, messages, turns and search in one SQLite file.

Every public method opens its own short transaction on a pooled connection, so
one Store may be shared by the web server's threads. Writes run under
``BEGIN IMMEDIATE`` (see ``engine.py``), which is what lets the CLI and the web
server write at the same moment without "database is locked".
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, func, insert, or_, select, tuple_, update
from sqlalchemy.exc import IntegrityError

from hermes.config import Config
from hermes.errors import Conflict, InvalidInput, NotFound, StoreError
from hermes.events import Usage
from hermes.messages import Message
from hermes.store import migrate
from hermes.store import search as search_module
from hermes.store.engine import (
    explained,
    make_engine,
    read_transaction,
    sqlite_path,
    write_transaction,
)
from hermes.store.models import messages_table, sessions_table, turns_table, utcnow
from hermes.store.values import (
    SearchHit,
    SessionInfo,
    StoredMessage,
    tool_calls_from_json,
    tool_calls_to_json,
)

ROLES = ("user", "assistant", "tool")
SOURCES = ("cli", "web", "import")
MAX_PAGE = 200
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


class Store:
    """Hermes' memory. Build it with :meth:`open`; share one per process."""

    def __init__(self, engine: Engine, config: Config):
        self.engine = engine
        self.config = config

    @classmethod
    def open(cls, config: Config, *, upgrade: bool = True) -> Store:
        """Open (creating if needed) the database of ``config``, upgraded to the head revision.

        A database at an older revision is first copied into ``backups/``.
        With ``upgrade=False`` an outdated database raises StoreError instead.
        """
        config.home.mkdir(parents=True, exist_ok=True)
        sqlite_path(config.database_url).parent.mkdir(parents=True, exist_ok=True)
        engine = make_engine(config.database_url)
        try:
            with explained(engine):
                if upgrade:
                    migrate.upgrade(engine, config.backups_dir)
                else:
                    with read_transaction(engine) as connection:
                        current = migrate.current_revision(connection)
                    if current != migrate.head_revision():
                        raise StoreError(
                            f"The database is at schema revision {current or 'none'}, not "
                            f"{migrate.head_revision()}: run `hermes db upgrade`."
                        )
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, config)

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- sessions ---------------------------------------------------------

    def create_session(
        self,
        *,
        title: str | None = None,
        source: str = "cli",
        model: str | None = None,
        system_prompt: str | None = None,
    ) -> SessionInfo:
        """Start a new, empty session."""
        if source not in SOURCES:
            raise InvalidInput(
                f"Unknown session source {source!r}: use one of {', '.join(SOURCES)}."
            )
        now = utcnow()
        with write_transaction(self.engine) as connection:
            session_id = connection.execute(
                insert(sessions_table)
                .values(
                    uid=uuid.uuid4().hex,
                    title=title,
                    source=source,
                    model=model,
                    system_prompt=system_prompt,
                    created_at=now,
                    updated_at=now,
                )
                .returning(sessions_table.c.id)
            ).scalar_one()
            return self._session(connection, session_id)

    def get_session(self, session_id: int) -> SessionInfo:
        """The session with this id; NotFound if there is none."""
        with read_transaction(self.engine) as connection:
            return self._session(connection, session_id)

    def latest_session(self) -> SessionInfo | None:
        """The most recently updated session, if any."""
        sessions, _ = self.list_sessions(limit=1)
        return sessions[0] if sessions else None

    def list_sessions(
        self, *, limit: int = 50, before: str | None = None
    ) -> tuple[list[SessionInfo], str | None]:
        """Newest-updated first. Returns a page and the cursor of the next one (or None)."""
        limit = max(1, min(int(limit), MAX_PAGE))
        s = sessions_table.c
        query = select(sessions_table).order_by(s.updated_at.desc(), s.id.desc()).limit(limit + 1)
        if before:
            updated_at, session_id = _decode_cursor(before)
            query = query.where(tuple_(s.updated_at, s.id) < tuple_(updated_at, session_id))
        with read_transaction(self.engine) as connection:
            rows = connection.execute(query).all()
        page = [_session_info(row) for row in rows[:limit]]
        cursor = _encode_cursor(page[-1]) if len(rows) > limit else None
        return page, cursor

    def session_ids(self) -> list[int]:
        """Every session id, oldest first (exports)."""
        with read_transaction(self.engine) as connection:
            return list(connection.execute(select(sessions_table.c.id).order_by("id")).scalars())

    def update_session(
        self,
        session_id: int,
        *,
        title: str | None = None,
        summary: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
    ) -> SessionInfo:
        """Change the given fields (None leaves a field as it is)."""
        changes = {
            key: value
            for key, value in {
                "title": title,
                "summary": summary,
                "model": model,
                "system_prompt": system_prompt,
            }.items()
            if value is not None
        }
        with write_transaction(self.engine) as connection:
            if changes:
                result = connection.execute(
                    update(sessions_table)
                    .where(sessions_table.c.id == session_id)
                    .values(**changes)
                )
                if result.rowcount == 0:
                    raise _not_found(session_id)
            return self._session(connection, session_id)

    def delete_session(self, session_id: int) -> None:
        """Delete a session with its messages and turns; they leave the search index too."""
        with write_transaction(self.engine) as connection:
            result = connection.execute(
                delete(sessions_table).where(sessions_table.c.id == session_id)
            )
            if result.rowcount == 0:
                raise _not_found(session_id)

    # ---- messages ---------------------------------------------------------

    def add_message(
        self, session_id: int, message: Message, *, turn_id: str | None = None
    ) -> StoredMessage:
        """Append a message to a session and return it with its id."""
        if message.role not in ROLES:
            raise InvalidInput(
                f"Unknown message role {message.role!r}: use one of {', '.join(ROLES)}."
            )
        now = utcnow()
        with write_transaction(self.engine) as connection:
            count = connection.execute(
                select(sessions_table.c.message_count).where(sessions_table.c.id == session_id)
            ).scalar()
            if count is None:
                raise _not_found(session_id)
            message_id = connection.execute(
                insert(messages_table)
                .values(_message_values(session_id, count, message, now, turn_id))
                .returning(messages_table.c.id)
            ).scalar_one()
            connection.execute(
                update(sessions_table)
                .where(sessions_table.c.id == session_id)
                .values(message_count=count + 1, updated_at=now)
            )
        return StoredMessage(message_id, session_id, now, message, turn_id)

    def messages(
        self, session_id: int, *, after_id: int | None = None, limit: int | None = None
    ) -> list[StoredMessage]:
        """A session's messages in conversation order, optionally after a message id."""
        m = messages_table.c
        query = select(messages_table).where(m.session_id == session_id).order_by(m.position)
        if after_id is not None:
            query = query.where(m.id > after_id)
        if limit is not None:
            query = query.limit(max(0, int(limit)))
        with read_transaction(self.engine) as connection:
            self._require_session(connection, session_id)
            rows = connection.execute(query).all()
        return [_stored_message(row) for row in rows]

    def history(self, session_id: int) -> list[Message]:
        """The whole conversation as Message values, exactly as they were added."""
        return [stored.message for stored in self.messages(session_id)]

    def add_usage(self, session_id: int, usage: Usage) -> None:
        """Add a model call's token counts (and cost, when known) to the session's totals."""
        s = sessions_table.c
        with write_transaction(self.engine) as connection:
            result = connection.execute(
                update(sessions_table)
                .where(s.id == session_id)
                .values(
                    input_tokens=s.input_tokens + usage.input_tokens,
                    output_tokens=s.output_tokens + usage.output_tokens,
                    cache_read_tokens=s.cache_read_tokens + usage.cache_read_tokens,
                    cache_write_tokens=s.cache_write_tokens + usage.cache_write_tokens,
                    cost_usd=s.cost_usd + (usage.cost_usd or 0.0),
                )
            )
            if result.rowcount == 0:
                raise _not_found(session_id)

    # ---- turns ------------------------------------------------------------

    def start_turn(self, session_id: int, turn_id: str) -> None:
        """Record a running turn; Conflict if the session already has one."""
        with write_transaction(self.engine) as connection:
            self._require_session(connection, session_id)
            try:
                with connection.begin_nested():
                    connection.execute(
                        insert(turns_table).values(
                            id=turn_id, session_id=session_id, status="running", started_at=utcnow()
                        )
                    )
            except IntegrityError:
                raise Conflict(
                    f"Session {session_id} already has a running turn; wait for it to finish "
                    "or cancel it."
                ) from None

    def finish_turn(self, turn_id: str, stop_reason: str) -> None:
        """Mark a turn finished with its stop reason."""
        with write_transaction(self.engine) as connection:
            result = connection.execute(
                update(turns_table)
                .where(turns_table.c.id == turn_id)
                .values(status="finished", stop_reason=stop_reason, finished_at=utcnow())
            )
            if result.rowcount == 0:
                raise NotFound(f"There is no turn {turn_id!r}.")

    def running_turn(self, session_id: int) -> str | None:
        """The id of the session's running turn, if it has one."""
        t = turns_table.c
        with read_transaction(self.engine) as connection:
            return connection.execute(
                select(t.id).where(t.session_id == session_id, t.status == "running")
            ).scalar()

    # ---- search -----------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        session_id: int | None = None,
        role: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[SearchHit]:
        """Search every message and session summary; any text is a valid query."""
        with read_transaction(self.engine) as connection:
            return search_module.search(
                connection,
                query,
                limit=limit,
                session_id=session_id,
                role=role,
                since=since,
                until=until,
            )

    # ---- bulk -------------------------------------------------------------

    def add_session_record(self, record: SessionRecord) -> int | None:
        """Add a whole conversation in one transaction; None if its uid or
        external id is already stored (imports are idempotent)."""
        return self.add_session_records([record])[0]

    def add_session_records(self, records: list[SessionRecord]) -> list[int | None]:
        """Add several conversations under one commit.

        All or nothing: a failure rolls the whole batch back, so no conversation
        is ever half-stored. Batching is what makes imports fast (every FTS5
        commit writes a new index segment). Returns each record's new session
        id, or None when its uid or external id was already stored.
        """
        s = sessions_table.c
        uids = [r.uid for r in records if r.uid]
        external_ids = [r.external_id for r in records if r.external_id]
        with write_transaction(self.engine) as connection:
            known: set[str] = set()
            if uids or external_ids:
                rows = connection.execute(
                    select(s.uid, s.external_id).where(
                        or_(s.uid.in_(uids), s.external_id.in_(external_ids))
                    )
                )
                for uid, external_id in rows:
                    known.update((uid, external_id))
                known.discard(None)
            fresh: list[SessionRecord] = []
            for record in records:
                if record.uid in known or record.external_id in known:
                    continue
                fresh.append(record)
                known.update((record.uid, record.external_id))
                known.discard(None)  # records without ids never match each other
            new_ids = self._insert_records(connection, fresh) if fresh else []
        by_record = {
            id(record): session_id for record, session_id in zip(fresh, new_ids, strict=True)
        }
        return [by_record.get(id(record)) for record in records]

    def _insert_records(self, connection, records: list[SessionRecord]) -> list[int]:
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
        # Plain tuples through the driver: at import sizes SQLAlchemy's per-row
        # type processing costs about a third of the whole insert.
        rows = [
            (
                session_id,
                position,
                message.role,
                message.content or "",
                tool_calls_to_json(message.tool_calls),
                message.tool_call_id,
                message.tool_name,
                int(bool(message.is_error)),
                message.context,
                _db_time(created_at),
            )
            for session_id, record in zip(session_ids, records, strict=True)
            for position, (message, created_at) in enumerate(record.messages)
        ]
        if rows:
            connection.exec_driver_sql(_INSERT_MESSAGE_ROWS, rows)
        return session_ids

    def iter_messages(self, session_id: int, *, batch: int = 500) -> Iterator[StoredMessage]:
        """All of a session's messages, fetched in batches (exports of long sessions)."""
        after = None
        while True:
            page = self.messages(session_id, after_id=after, limit=batch)
            yield from page
            if len(page) < batch:
                return
            after = page[-1].id

    # ---- helpers ----------------------------------------------------------

    def _session(self, connection, session_id: int) -> SessionInfo:
        row = connection.execute(
            select(sessions_table).where(sessions_table.c.id == session_id)
        ).first()
        if row is None:
            raise _not_found(session_id)
        return _session_info(row)

    def _require_session(self, connection, session_id: int) -> None:
        found = connection.execute(
            select(func.count()).where(sessions_table.c.id == session_id)
        ).scalar()
        if not found:
            raise _not_found(session_id)


def _not_found(session_id: int) -> NotFound:
    return NotFound(f"There is no session {session_id}; `hermes` /sessions lists them.")


def _message_values(
    session_id: int, position: int, message: Message, created_at: datetime, turn_id: str | None
) -> dict:
    return {
        "session_id": session_id,
        "position": position,
        "role": message.role,
        "content": message.content or "",
        "tool_calls": tool_calls_to_json(message.tool_calls),
        "tool_call_id": message.tool_call_id,
        "tool_name": message.tool_name,
        "is_error": bool(message.is_error),
        "context": message.context,
        "turn_id": turn_id,
        "created_at": created_at,
    }


def _db_time(moment: datetime) -> str:
    """The text SQLAlchemy's SQLite DateTime stores, for naive-UTC ``moment``."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _session_info(row) -> SessionInfo:
    return SessionInfo(
        id=row.id,
        title=row.title,
        source=row.source,
        created_at=row.created_at,
        updated_at=row.updated_at,
        message_count=row.message_count,
        summary=row.summary,
        model=row.model,
        system_prompt=row.system_prompt,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        cost_usd=row.cost_usd,
        uid=row.uid,
        external_id=row.external_id,
    )


def _stored_message(row) -> StoredMessage:
    message = Message(
        role=row.role,
        content=row.content,
        tool_calls=tool_calls_from_json(row.tool_calls),
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        is_error=bool(row.is_error),
        context=row.context,
    )
    return StoredMessage(row.id, row.session_id, row.created_at, message, row.turn_id)


def _encode_cursor(session: SessionInfo) -> str:
    raw = f"{session.updated_at.isoformat()}|{session.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        stamp, _, session_id = base64.urlsafe_b64decode(padded.encode()).decode().partition("|")
        return datetime.fromisoformat(stamp), int(session_id)
    except (ValueError, UnicodeError, binascii.Error):
        raise InvalidInput(
            "The sessions cursor is not valid; use the `next` value of the previous page."
        ) from None
