"""Initial tables: sessions, messages, turns.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from hermes.store.models import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("title", sa.Text),
        sa.Column("source", sa.String(16), nullable=False, server_default="cli"),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("message_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("summary", sa.Text),
        sa.Column("model", sa.String(200)),
        sa.Column("system_prompt", sa.Text),
        sa.Column("input_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("output_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cache_read_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cache_write_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cost_usd", sa.Float, nullable=False, server_default="0"),
    )
    op.create_index("ix_sessions_updated", "sessions", ["updated_at", "id"])

    op.create_table(
        "messages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "session_id",
            sa.Integer,
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False, server_default=""),
        sa.Column("tool_calls", sa.Text),
        sa.Column("tool_call_id", sa.String(200)),
        sa.Column("tool_name", sa.String(200)),
        sa.Column("is_error", sa.Boolean, nullable=False, server_default="0"),
        sa.Column("context", sa.Text),
        sa.Column("turn_id", sa.String(64)),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("input_tokens", sa.Integer),
        sa.Column("output_tokens", sa.Integer),
    )
    op.create_index(
        "ix_messages_session_position", "messages", ["session_id", "position"], unique=True
    )

    op.create_table(
        "turns",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column(
            "session_id",
            sa.Integer,
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("status", sa.String(16), nullable=False, server_default="running"),
        sa.Column("stop_reason", sa.String(32)),
        sa.Column("started_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
    )
    op.create_index(
        "ix_turns_one_running",
        "turns",
        ["session_id"],
        unique=True,
        sqlite_where=sa.text("status = 'running'"),
    )


def downgrade() -> None:
    op.drop_table("turns")
    op.drop_table("messages")
    op.drop_table("sessions")
