"""Session identity: a stable uid for every session, external ids for imports.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (no table rebuild): SQLite supports it for a NOT NULL
    # column with a default, and the unique indexes come after the backfill.
    op.add_column("sessions", sa.Column("uid", sa.String(32), nullable=False, server_default=""))
    op.add_column("sessions", sa.Column("external_id", sa.String(200), nullable=True))

    # Existing sessions get a uid each, so exports made after the upgrade can be
    # recognised when imported again.
    connection = op.get_bind()
    ids = [row[0] for row in connection.execute(sa.text("SELECT id FROM sessions"))]
    if ids:
        connection.execute(
            sa.text("UPDATE sessions SET uid = :uid WHERE id = :id"),
            [{"uid": uuid.uuid4().hex, "id": session_id} for session_id in ids],
        )
    op.create_index("ix_sessions_uid", "sessions", ["uid"], unique=True)
    op.create_index("ix_sessions_external_id", "sessions", ["external_id"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_sessions_external_id", "sessions")
    op.drop_index("ix_sessions_uid", "sessions")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("external_id")
        batch.drop_column("uid")
