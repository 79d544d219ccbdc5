"""The schema as SQLAlchemy 2 models. Alembic revisions in ``migrations/`` own
the actual database; these models describe the head revision.

The FTS5 search tables, their source view and triggers are not here: they are
raw SQL in a migration and hidden from autogenerate (see ``migrations/env.py``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator):
    """Aware UTC datetimes in, aware UTC datetimes out; stored naive (sortable text)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value, dialect):
        if value is not None:
            value = value.replace(tzinfo=UTC)
        return value


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class SessionRow(Base):
    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Stable identity across databases: our JSON export carries it so that
    # importing the same export twice (anywhere) adds nothing.
    uid: Mapped[str] = mapped_column(String(32))
    # "chatgpt:<id>" / "claude:<uuid>" for imported conversations.
    external_id: Mapped[str | None] = mapped_column(String(200))
    title: Mapped[str | None] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(16), server_default="cli")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    message_count: Mapped[int] = mapped_column(Integer, server_default="0")
    summary: Mapped[str | None] = mapped_column(Text)
    model: Mapped[str | None] = mapped_column(String(200))
    system_prompt: Mapped[str | None] = mapped_column(Text)
    input_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    output_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    cache_read_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    cache_write_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    cost_usd: Mapped[float] = mapped_column(Float, server_default="0")
    # Provider-reported / estimated prompt tokens at the last model call (budget.py).
    token_ratio: Mapped[float | None] = mapped_column(Float)
    # Model calls whose price was unknown (local models): their cost is not in cost_usd.
    unpriced_calls: Mapped[int] = mapped_column(Integer, server_default="0")

    __table_args__ = (
        Index("ix_sessions_updated", "updated_at", "id"),
        Index("ix_sessions_uid", "uid", unique=True),
        Index("ix_sessions_external_id", "external_id", unique=True),
    )


class MessageRow(Base):
    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    # 0-based place in the conversation.
    position: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text, server_default="")
    # JSON list of {id, name, input}.
    tool_calls: Mapped[str | None] = mapped_column(Text)
    tool_call_id: Mapped[str | None] = mapped_column(String(200))
    tool_name: Mapped[str | None] = mapped_column(String(200))
    is_error: Mapped[bool] = mapped_column(Boolean, server_default="0")
    # Per-turn text sent ahead of a user message; replayed, never shown or searched.
    context: Mapped[str | None] = mapped_column(Text)
    turn_id: Mapped[str | None] = mapped_column(String(64))
    # JSON: who allowed or refused a gated tool call, when, and why (tool messages only).
    approval: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # An assistant answer checkpointed while it streamed; cleared by the final write.
    partial: Mapped[bool] = mapped_column(Boolean, server_default="0")
    # Kept for the user, never replayed to the model (a refused exchange).
    hidden: Mapped[bool] = mapped_column(Boolean, server_default="0")

    __table_args__ = (Index("ix_messages_session_position", "session_id", "position", unique=True),)


class TurnRow(Base):
    __tablename__ = "turns"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), server_default="running")
    stop_reason: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The process running the turn: a turn whose process is gone is closed as
    # "interrupted" (see hermes.store.turns).
    pid: Mapped[int | None] = mapped_column(Integer)
    host: Mapped[str | None] = mapped_column(String(255))
    process_started: Mapped[str | None] = mapped_column(String(64))
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        # At most one running turn per session, enforced by the database so two
        # processes racing to start a turn cannot both win.
        Index(
            "ix_turns_one_running",
            "session_id",
            unique=True,
            sqlite_where=text("status = 'running'"),
        ),
    )


class CompactionRow(Base):
    """One compaction: in the model's view, messages up to ``through_message_id``
    (after the first) are replaced by ``summary``; tool outputs up to
    ``pruned_through_id`` are shown shortened. The latest row is in force."""

    __tablename__ = "compactions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    through_message_id: Mapped[int] = mapped_column(Integer)
    pruned_through_id: Mapped[int | None] = mapped_column(Integer)
    summary: Mapped[str | None] = mapped_column(Text)
    messages_covered: Mapped[int] = mapped_column(Integer, server_default="0")
    tokens_before: Mapped[int] = mapped_column(Integer, server_default="0")
    tokens_after: Mapped[int] = mapped_column(Integer, server_default="0")
    model: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_compactions_session", "session_id", "id"),)


class UsageRow(Base):
    """What model calls spent, for ``hermes usage`` (per day and model)."""

    __tablename__ = "usage_records"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    session_id: Mapped[int | None] = mapped_column(ForeignKey("sessions.id", ondelete="SET NULL"))
    model: Mapped[str] = mapped_column(String(200), server_default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    input_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    output_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    cache_read_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    cache_write_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    cost_usd: Mapped[float | None] = mapped_column(Float)

    __table_args__ = (Index("ix_usage_records_created", "created_at"),)


class SkillUseRow(Base):
    """How often a skill was used; kept here so SKILL.md files never change on use."""

    __tablename__ = "skill_uses"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    uses: Mapped[int] = mapped_column(Integer, server_default="0")
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class EmbeddingSpaceRow(Base):
    """A vector space: one embedding model (vectors of two spaces never mix)."""

    __tablename__ = "embedding_spaces"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    dim: Mapped[int] = mapped_column(Integer)

    __table_args__ = (Index("ix_embedding_spaces_name", "name", unique=True),)


class MessageVectorRow(Base):
    """A message's embedding in one space, int8-quantized (see store/vectors.py)."""

    __tablename__ = "message_vectors"

    # Insertion order: lets a process load only the vectors added since it last looked.
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    space_id: Mapped[int] = mapped_column(ForeignKey("embedding_spaces.id", ondelete="CASCADE"))
    message_id: Mapped[int] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    vector: Mapped[bytes] = mapped_column(LargeBinary)

    __table_args__ = (
        Index("ix_message_vectors_space_message", "space_id", "message_id", unique=True),
        Index("ix_message_vectors_message", "message_id"),
    )


sessions_table = SessionRow.__table__
messages_table = MessageRow.__table__
turns_table = TurnRow.__table__
embedding_spaces_table = EmbeddingSpaceRow.__table__
message_vectors_table = MessageVectorRow.__table__
compactions_table = CompactionRow.__table__
usage_table = UsageRow.__table__
skill_uses_table = SkillUseRow.__table__
