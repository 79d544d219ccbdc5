"""The memory store: sessions, messages, turns and search in one SQLite file.

Every public method opens its own short transaction on a pooled connection, so
one Store may be shared by the web server's threads. Writes run under
``BEGIN IMMEDIATE`` (see ``engine.py``), which is what lets the CLI and the web
server write at the same moment without "database is locked".
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from datetime import datetime

from sqlalchemy import Engine, delete, func, insert, select, tuple_, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError

from hermes.config import Config
from hermes.errors import Conflict, InvalidInput, NotFound, SessionBusy, StoreError
from hermes.events import Usage
from hermes.messages import Message
from hermes.store import bulk, ledger, migrate, repair, rows, turns
from hermes.store import search as search_module
from hermes.store.bulk import RecordOutcome, SessionRecord
from hermes.store.engine import (
    explained,
    make_engine,
    make_folders,
    read_transaction,
    write_transaction,
)
from hermes.store.models import (
    messages_table,
    sessions_table,
    skill_uses_table,
    turns_table,
    utcnow,
)
from hermes.store.values import (
    Compaction,
    SearchHit,
    SessionInfo,
    StoredMessage,
    UsageDay,
    iso,
    tool_calls_to_json,
)

log = logging.getLogger(__name__)
_UNSET = object()

ROLES = ("user", "assistant", "tool")
SOURCES = ("cli", "web", "import")
MAX_PAGE = 200


class Store:
    """Hermes' memory. Build it with :meth:`open`; share one per process."""

    def __init__(self, engine: Engine, config: Config):
        self.engine = engine
        self.config = config
        # Recall's semantic layer: built on first use (see the embedder property).
        self._embedder = _UNSET
        self._indexer = None
        self._running: set[str] = set()  # this Store's turns running in this process

    @classmethod
    def open(cls, config: Config, *, upgrade: bool = True) -> Store:
        """Open (creating if needed) the database of ``config``, upgraded to the head revision.

        A database at an older revision is first copied into ``backups/``.
        With ``upgrade=False`` an outdated database raises StoreError instead.
        """
        make_folders(config)
        engine = make_engine(config.database_url)
        try:
            with explained(engine):
                if upgrade:
                    migrate.upgrade(engine, config.backups_dir)
                else:
                    with read_transaction(engine) as connection:
                        current = migrate.current_revision(connection)
                    if current is not None and current not in migrate.known_revisions():
                        raise migrate.unknown_revision(current)
                    if current != migrate.head_revision():
                        raise StoreError(
                            f"The database is at schema revision {current or 'none'}, not "
                            f"{migrate.head_revision()}: run `hermes db upgrade`."
                        )
        except BaseException:
            engine.dispose()
            raise
        store = cls(engine, config)
        if upgrade:
            # Turns whose process died (kill -9, a crash, a restart) free their sessions.
            store.close_stale_turns()
        return store

    @classmethod
    def open_read_only(cls, config: Config) -> Store:
        """Open the database for reading only (a home the user cannot write): no folder,
        no upgrade, nothing written. StoreError when it is not at this Hermes' schema."""
        engine = make_engine(config.database_url, read_only=True)
        try:
            with explained(engine), read_transaction(engine) as connection:
                current = migrate.current_revision(connection)
            if current != migrate.head_revision():
                raise StoreError(
                    f"The database is at schema revision {current or 'none'} and its folder "
                    "is read-only, so it cannot be upgraded: run `hermes db upgrade` as a user "
                    "who can write it."
                )
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, config)

    def close(self) -> None:
        """Stop the background indexer and release every pooled connection."""
        if self._indexer is not None:
            self._indexer.stop()
        self.engine.dispose()

    # ---- recall: embeddings -------------------------------------------------

    @property
    def embedder(self):
        """The configured Embedder (None when HERMES_EMBEDDINGS=off or it cannot load)."""
        if self._embedder is _UNSET:
            from hermes.embeddings import EmbeddingError, make_embedder

            try:
                self._embedder = make_embedder(self.config)
            except EmbeddingError as exc:
                log.warning("semantic search is off: %s", exc)
                self._embedder = None
        return self._embedder

    @embedder.setter
    def embedder(self, value) -> None:
        if self._indexer is not None:
            self._indexer.stop()
            self._indexer = None
        self._embedder = value

    def start_indexing(self, *, delay: float | None = None) -> None:
        """Embed new messages in a background thread a moment after they are stored
        (surfaces call this; a bare Store only embeds on :meth:`reindex`)."""
        from hermes.store.indexer import START_DELAY, BackgroundIndexer

        if self._indexer is None and self.embedder is not None:
            self._indexer = BackgroundIndexer(
                self.engine,
                self.embedder,
                delay=START_DELAY if delay is None else delay,
                busy=lambda: bool(self._running),
            )
        self._poke()

    def wait_indexed(self, timeout: float = 60.0) -> bool:
        """Block until the background indexer has nothing left (True) or timeout."""
        return self._indexer is None or self._indexer.wait_idle(timeout)

    def reindex(self, *, batch: int | None = None):
        """Embed every message that has no vector yet; yields Progress (resumable)."""
        from hermes.store import indexer

        if self.embedder is None:
            return iter(())
        return indexer.reindex(self.engine, self.embedder, batch=batch or indexer.BATCH)

    def index_status(self) -> tuple[int, int]:
        """(messages with a vector in the current space, messages to embed in all)."""
        from sqlalchemy import text

        from hermes.store import indexer, vectors

        if self.embedder is None:
            return 0, 0
        with read_transaction(self.engine) as connection:
            space = vectors.space_id(
                connection, self.embedder.space, self.embedder.dim, create=False
            )
            total = connection.execute(
                text(
                    "SELECT count(*) FROM messages WHERE role IN ('user', 'assistant') "
                    "AND content != ''"
                )
            ).scalar()
        if space is None:
            return 0, total
        return total - indexer.pending_count(self.engine, space), total

    def _poke(self, message_id: int | None = None) -> None:
        """Tell the indexer about a written message (or, with none, about any change)."""
        if self._indexer is not None:
            self._indexer.poke(message_id)

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
            updated_at, session_id = rows.decode_cursor(before)
            query = query.where(tuple_(s.updated_at, s.id) < tuple_(updated_at, session_id))
        with read_transaction(self.engine) as connection:
            found = connection.execute(query).all()
        page = [rows.session_info(row) for row in found[:limit]]
        cursor = rows.encode_cursor(page[-1]) if len(found) > limit else None
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
        self,
        session_id: int,
        message: Message,
        *,
        turn_id: str | None = None,
        partial: bool = False,
    ) -> StoredMessage:
        """Append a message to a session and return it with its id.

        A message of a running turn refreshes that turn's heartbeat too.
        """
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
                .values(
                    **rows.message_values(session_id, count, message, now, turn_id),
                    partial=partial,
                )
                .returning(messages_table.c.id)
            ).scalar_one()
            if turn_id is not None:
                turns.heartbeat(connection, turn_id)
            connection.execute(
                update(sessions_table)
                .where(sessions_table.c.id == session_id)
                .values(message_count=count + 1, updated_at=now)
            )
        self._poke(message_id)
        return StoredMessage(message_id, session_id, now, message, turn_id)

    def messages(
        self,
        session_id: int,
        *,
        after_id: int | None = None,
        limit: int | None = None,
        for_model: bool = False,
    ) -> list[StoredMessage]:
        """A session's messages in conversation order, optionally after a message id.

        ``for_model`` leaves out what is never replayed to the model (hidden
        refusals); the context view reads its messages this way.
        """
        m = messages_table.c
        query = select(messages_table).where(m.session_id == session_id).order_by(m.position)
        if for_model:
            query = query.where(m.hidden.is_(False))
        if after_id is not None:
            query = query.where(m.id > after_id)
        if limit is not None:
            query = query.limit(max(0, int(limit)))
        with read_transaction(self.engine) as connection:
            self._require_session(connection, session_id)
            found = connection.execute(query).all()
        return [rows.stored_message(row) for row in found]

    def message_page(
        self,
        session_id: int,
        *,
        before: int | None = None,
        after: int | None = None,
        limit: int = 100,
    ) -> tuple[list[StoredMessage], bool]:
        """One page of a session's messages, oldest first, and whether more lie beyond it.

        Without ``before``/``after`` the newest page (a long session opens at its
        end); ``before``/``after`` take a message id of this session and page
        towards the start or the end. Only the page is read, never the transcript.
        """
        m = messages_table.c
        limit = max(1, int(limit))
        query = select(messages_table).where(m.session_id == session_id)
        with read_transaction(self.engine) as connection:
            self._require_session(connection, session_id)
            anchor = before if before is not None else after
            if anchor is not None:
                position = connection.execute(
                    select(m.position).where(m.id == anchor, m.session_id == session_id)
                ).scalar()
                if position is None:
                    raise NotFound(f"Session {session_id} has no message {anchor}.")
                if after is not None:
                    query = query.where(m.position > position)
                else:
                    query = query.where(m.position < position)
            forward = after is not None
            order = m.position.asc() if forward else m.position.desc()
            found = connection.execute(query.order_by(order).limit(limit + 1)).all()
        page = [rows.stored_message(row) for row in found[:limit]]
        if not forward:
            page.reverse()
        return page, len(found) > limit

    def history(self, session_id: int) -> list[Message]:
        """The conversation as Message values, as they were added, without what is never
        replayed to a model (hidden refusals): what the curator and summaries read."""
        return [stored.message for stored in self.messages(session_id, for_model=True)]

    def add_usage(self, session_id: int, usage: Usage, *, model: str = "") -> None:
        """Add model calls' token counts (and cost, when known) to the session's totals and
        to the per-day ledger of ``hermes usage``."""
        with write_transaction(self.engine) as connection:
            if not ledger.add_usage(connection, session_id, usage, model):
                raise _not_found(session_id)

    def usage_by_day(self, *, days: int = 30) -> list[UsageDay]:
        """Spend per UTC day and model over the last ``days`` days, newest first."""
        with read_transaction(self.engine) as connection:
            return ledger.usage_by_day(connection, days)

    # ---- compactions (the model's view of long sessions) ------------------

    def add_compaction(
        self,
        session_id: int,
        *,
        through_message_id: int,
        pruned_through_id: int | None,
        summary: str | None,
        messages_covered: int = 0,
        tokens_before: int = 0,
        tokens_after: int = 0,
        model: str | None = None,
    ) -> Compaction:
        """Store a compaction; from now on it shapes every request of the session."""
        with write_transaction(self.engine) as connection:
            self._require_session(connection, session_id)
            return ledger.add_compaction(
                connection,
                session_id,
                through_message_id=through_message_id,
                pruned_through_id=pruned_through_id,
                summary=summary,
                messages_covered=messages_covered,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                model=model,
            )

    def latest_compaction(self, session_id: int) -> Compaction | None:
        """The compaction in force for a session, if it has one."""
        with read_transaction(self.engine) as connection:
            return ledger.latest_compaction(connection, session_id)

    def compactions(self, session_id: int) -> list[Compaction]:
        """Every compaction of a session, oldest first (transcript markers)."""
        with read_transaction(self.engine) as connection:
            self._require_session(connection, session_id)
            return ledger.compactions(connection, session_id)

    def set_token_ratio(self, session_id: int, ratio: float) -> None:
        """Store the session's token-estimate calibration (see ``hermes.agent.budget``)."""
        with write_transaction(self.engine) as connection:
            ledger.set_token_ratio(connection, session_id, ratio)

    # ---- turns ------------------------------------------------------------
    # The registry itself (owners, staleness) lives in hermes.store.turns.

    def start_turn(self, session_id: int, turn_id: str) -> None:
        """Record a running turn owned by this process.

        SessionBusy (with the running turn's id) if the session already has a
        live one; a running turn whose process is gone is closed as
        ``interrupted`` first, so it never blocks the session.
        """
        # Live before its row exists: another thread must never take it for stale.
        added = turns.mark_live(turn_id)
        if added:
            self._running.add(turn_id)
        try:
            with write_transaction(self.engine) as connection:
                self._require_session(connection, session_id)
                running = turns.running_row(connection, session_id)
                if running is not None and turns.is_stale(running):
                    self._interrupt(connection, running.id, session_id)
                    running = None
                if running is not None:
                    raise SessionBusy(session_id, running.id)
                try:
                    with connection.begin_nested():
                        now = utcnow()
                        connection.execute(
                            insert(turns_table).values(
                                id=turn_id,
                                session_id=session_id,
                                status="running",
                                started_at=now,
                                heartbeat_at=now,
                                **turns.owner_values(),
                            )
                        )
                except IntegrityError:
                    # BEGIN IMMEDIATE serialises writers, so this is a reused turn id.
                    raise Conflict(f"Turn {turn_id!r} exists already; use a new turn id.") from None
        except BaseException:
            if added:  # a reused id must not unmark the turn that really runs
                turns.mark_done(turn_id)
                self._running.discard(turn_id)
            raise

    def finish_turn(self, turn_id: str, stop_reason: str) -> None:
        """Mark a turn finished with its stop reason (a finished turn stays as it was)."""
        try:
            with write_transaction(self.engine) as connection:
                if turns.session_of(connection, turn_id) is None:
                    raise NotFound(f"There is no turn {turn_id!r}.")
                turns.close(connection, turn_id, stop_reason)
        finally:
            turns.mark_done(turn_id)
            self._running.discard(turn_id)

    def heartbeat(self, turn_id: str) -> None:
        """The owner of a running turn says it is still alive."""
        with write_transaction(self.engine) as connection:
            turns.heartbeat(connection, turn_id)

    def running_turn(self, session_id: int) -> str | None:
        """The id of the session's running turn, if it has one whose owner is alive."""
        with read_transaction(self.engine) as connection:
            row = turns.running_row(connection, session_id)
        if row is None:
            return None
        if not turns.is_stale(row):
            return row.id
        with write_transaction(self.engine) as connection:
            # Look again under the write lock: a new turn may have replaced the stale one
            # since the read, and its pending tool calls must not be "repaired".
            row = turns.running_row(connection, session_id)
            if row is not None and turns.is_stale(row):
                self._interrupt(connection, row.id, session_id)
                row = turns.running_row(connection, session_id)
        return row.id if row is not None else None

    def close_stale_turns(self) -> list[str]:
        """Close every running turn whose process is gone as ``interrupted`` (start-up)."""
        with write_transaction(self.engine) as connection:
            stale = turns.stale_rows(connection)
            for row in stale:
                self._interrupt(connection, row.id, row.session_id)
        return [row.id for row in stale]

    def _interrupt(self, connection, turn_id: str, session_id: int) -> None:
        # Repair only when this call closed the turn: once it is closed, another turn may own
        # the session, and that turn's open tool calls are still running.
        if turns.close(connection, turn_id, "interrupted"):
            repair.repair_session(connection, session_id, running_turn=None)

    # ---- what the model sees ------------------------------------------------

    def model_history(self, session_id: int, *, turn_id: str | None = None) -> list[Message]:
        """The history to replay to the model: repaired first, hidden messages left out.

        Call it as the owner of the session's running turn ``turn_id``: the
        repair writes (once) the results of tool calls that never got one.
        """
        with write_transaction(self.engine) as connection:
            self._require_session(connection, session_id)
            repair.repair_session(connection, session_id, running_turn=turn_id)
            m = messages_table.c
            found = connection.execute(
                select(messages_table)
                .where(m.session_id == session_id, m.hidden.is_(False))
                .order_by(m.position)
            ).all()
        return [rows.stored_message(row).message for row in found]

    def checkpoint(self, session_id: int, turn_id: str, message_id: int | None, text: str) -> int:
        """Save a streaming answer's text so far; returns its message id.

        The first call adds a ``partial`` assistant message, later ones update
        it in place; :meth:`finish_message` writes the final version.
        """
        if message_id is None:
            stored = self.add_message(
                session_id, Message(role="assistant", content=text), turn_id=turn_id, partial=True
            )
            return stored.id
        with write_transaction(self.engine) as connection:
            connection.execute(
                update(messages_table).where(messages_table.c.id == message_id).values(content=text)
            )
            turns.heartbeat(connection, turn_id)
        return message_id

    def finish_message(self, message_id: int, message: Message) -> None:
        """Replace a checkpointed message with its final content (one row, never two)."""
        with write_transaction(self.engine) as connection:
            result = connection.execute(
                update(messages_table)
                .where(messages_table.c.id == message_id)
                .values(
                    content=message.content or "",
                    tool_calls=tool_calls_to_json(message.tool_calls),
                    partial=False,
                )
            )
            if result.rowcount == 0:
                raise NotFound(f"There is no message {message_id}.")
        self._poke(message_id)  # its old vector (of the partial text) is gone

    def hide_turn(self, turn_id: str) -> None:
        """Keep a turn's messages for the user but out of what the model is sent again."""
        with write_transaction(self.engine) as connection:
            connection.execute(
                update(messages_table)
                .where(messages_table.c.turn_id == turn_id)
                .values(hidden=True)
            )

    # ---- skill uses ---------------------------------------------------------

    def count_skill_use(self, name: str) -> None:
        """One more use of skill ``name`` (counted here so its SKILL.md never changes)."""
        now = utcnow()
        table = skill_uses_table
        with write_transaction(self.engine) as connection:
            connection.execute(
                sqlite_insert(table)
                .values(name=name, uses=1, last_used_at=now)
                .on_conflict_do_update(
                    index_elements=[table.c.name],
                    set_={"uses": table.c.uses + 1, "last_used_at": now},
                )
            )

    def skill_use_counts(self) -> dict[str, tuple[int, str | None]]:
        """Every counted skill: ``name -> (uses, last used, ISO time)``."""
        with read_transaction(self.engine) as connection:
            found = connection.execute(select(skill_uses_table)).all()
        return {row.name: (row.uses, iso(row.last_used_at, "seconds")) for row in found}

    def turn_session(self, turn_id: str) -> int | None:
        """The session a recorded turn belongs to, or None for an unknown turn id."""
        t = turns_table.c
        with read_transaction(self.engine) as connection:
            return connection.execute(select(t.session_id).where(t.id == turn_id)).scalar()

    def running_turns(self, session_ids: list[int]) -> dict[int, str]:
        """``{session_id: running turn id}`` for those of ``session_ids`` with one.

        Reads every running turn (a handful at most, through the partial index)
        rather than passing the ids: one small statement for a whole page. A
        turn whose process is gone is left out (``running_turn`` closes it)."""
        if not session_ids:
            return {}
        with read_transaction(self.engine) as connection:
            found = connection.execute(
                select(turns_table).where(turns_table.c.status == "running")
            ).all()
        wanted = set(session_ids)
        return {
            row.session_id: row.id
            for row in found
            if row.session_id in wanted and not turns.is_stale(row)
        }

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
        """Search every message and session summary; any text is a valid query.

        It does not poke the indexer: nothing was written. (A poke naming no
        message starts a pass over every message looking for missing vectors,
        0.25-1.2 s of CPU at 1M messages.) Writes poke it."""
        with read_transaction(self.engine) as connection:
            return search_module.search(
                connection,
                query,
                limit=limit,
                session_id=session_id,
                role=role,
                since=since,
                until=until,
                embedder=self.embedder,
                database=str(self.engine.url.database),
            )

    # ---- bulk -------------------------------------------------------------

    def add_session_record(self, record: SessionRecord) -> int | None:
        """Add a whole conversation in one transaction; None if its uid or
        external id is already stored (imports are idempotent)."""
        return self.add_session_records([record])[0]

    def add_session_records(self, records: list[SessionRecord]) -> list[int | None]:
        """Add several conversations under one commit; each one's new session id,
        or None when it was already stored (see :meth:`merge_session_records`)."""
        return [
            outcome.session_id if outcome.action == bulk.ADDED else None
            for outcome in self.merge_session_records(records)
        ]

    def merge_session_records(self, records: list[SessionRecord]) -> list[RecordOutcome]:
        """Add, extend or skip each conversation, all under one commit.

        All or nothing: a failure rolls the whole batch back, so no conversation
        is ever half-stored. Batching is what makes imports fast (every FTS5
        commit writes a new index segment). A conversation already stored is
        extended with the new messages of a newer export, or skipped; see
        ``hermes.store.bulk``.
        """
        with write_transaction(self.engine) as connection:
            outcomes = bulk.add_records(connection, records)
        self._poke()
        return outcomes

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
        return rows.session_info(row)

    def _require_session(self, connection, session_id: int) -> None:
        found = connection.execute(
            select(func.count()).where(sessions_table.c.id == session_id)
        ).scalar()
        if not found:
            raise _not_found(session_id)


def _not_found(session_id: int) -> NotFound:
    return NotFound(f"There is no session {session_id}; `hermes` /sessions lists them.")
