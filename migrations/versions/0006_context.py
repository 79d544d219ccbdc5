"""Long sessions: stored compactions, a usage ledger per model call, per-session token calibration.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from hermes.store.models import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Which messages a compaction covers and the summary that replaces them in
    # the model's view (the messages themselves stay in `messages`).
    op.create_table(
        "compactions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "session_id",
            sa.Integer,
            sa.ForeignKey("sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("through_message_id", sa.Integer, nullable=False),
        sa.Column("pruned_through_id", sa.Integer),
        sa.Column("summary", sa.Text),
        sa.Column("messages_covered", sa.Integer, nullable=False, server_default="0"),
        sa.Column("tokens_before", sa.Integer, nullable=False, server_default="0"),
        sa.Column("tokens_after", sa.Integer, nullable=False, server_default="0"),
        sa.Column("model", sa.String(200)),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_compactions_session", "compactions", ["session_id", "id"])

    # One row per model call (or per turn, as the loop saves it): what `hermes usage` adds up by day and model. It keeps
    # the spend of deleted sessions (session_id becomes NULL).
    op.create_table(
        "usage_records",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "session_id",
            sa.Integer,
            sa.ForeignKey("sessions.id", ondelete="SET NULL"),
        ),
        sa.Column("model", sa.String(200), nullable=False, server_default=""),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("output_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cache_read_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cache_write_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("cost_usd", sa.Float),
    )
    op.create_index("ix_usage_records_created", "usage_records", ["created_at"])

    op.add_column("sessions", sa.Column("token_ratio", sa.Float))
    op.add_column(
        "sessions",
        sa.Column("unpriced_calls", sa.Integer, nullable=False, server_default="0"),
    )

    # Sessions from before this revision: their totals become one ledger row
    # each, dated when the session was last used, so `hermes usage` shows them.
    op.execute(
        "INSERT INTO usage_records (session_id, model, created_at, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_usd) "
        "SELECT id, COALESCE(model, ''), updated_at, input_tokens, output_tokens, "
        "cache_read_tokens, cache_write_tokens, cost_usd FROM sessions "
        "WHERE input_tokens + output_tokens > 0"
    )


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("unpriced_calls")
        batch.drop_column("token_ratio")
    op.drop_index("ix_usage_records_created", "usage_records")
    op.drop_table("usage_records")
    op.drop_index("ix_compactions_session", "compactions")
    op.drop_table("compactions")
