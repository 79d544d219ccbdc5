"""Drop messages.input_tokens / output_tokens: never written, never read.

Token usage is counted per session (sessions.input_tokens / output_tokens);
the per-message columns from 0001 stayed NULL in every database.

Batch mode with ``recreate="never"`` emits SQLite's own ``ALTER TABLE ...
DROP COLUMN`` (SQLite 3.35+) instead of rebuilding the table: a rebuild would
drop the messages table's FTS5 triggers and trip over the search view that
reads it, while dropping two unreferenced columns in place keeps every row id
the search index points at.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages", recreate="never") as batch:
        batch.drop_column("input_tokens")
        batch.drop_column("output_tokens")


def downgrade() -> None:
    with op.batch_alter_table("messages", recreate="never") as batch:
        batch.add_column(sa.Column("input_tokens", sa.Integer))
        batch.add_column(sa.Column("output_tokens", sa.Integer))
