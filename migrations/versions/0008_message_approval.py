"""Approvals: the decision on a gated tool call is kept with its tool message.

A nullable JSON text column ``messages.approval`` (who decided, when, what);
older messages have none. Plain ADD COLUMN: no table rebuild, no FTS change.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("approval", sa.Text(), nullable=True))


def downgrade() -> None:
    # SQLite 3.35+ drops a column in place; a batch rebuild would trip over the
    # search view and triggers that reference the table.
    op.execute("ALTER TABLE messages DROP COLUMN approval")
