"""Turn integrity: who owns a running turn, partial and hidden messages, skill use counts.

- ``turns.pid`` / ``host`` / ``process_started`` / ``heartbeat_at`` name the
  process running a turn, so a turn left ``running`` by a process that died
  can be recognised and closed as ``interrupted`` at start-up.
- ``messages.partial`` marks an assistant message checkpointed while it was
  still streaming; ``messages.hidden`` keeps a message for the user but out of
  what is replayed to the model (a refused exchange).
- ``skill_uses`` counts skill uses in the database, so using a skill never
  rewrites its SKILL.md.

Revision ID: 0004
Revises: 0003
Create Date: 2025-01-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from hermes.store.models import UTCDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN: nullable or defaulted, so SQLite needs no table rebuild
    # (and the FTS triggers on messages stay as they are).
    op.add_column("turns", sa.Column("pid", sa.Integer, nullable=True))
    op.add_column("turns", sa.Column("host", sa.String(255), nullable=True))
    op.add_column("turns", sa.Column("process_started", sa.String(64), nullable=True))
    op.add_column("turns", sa.Column("heartbeat_at", UTCDateTime, nullable=True))
    op.add_column("messages", sa.Column("partial", sa.Boolean, nullable=False, server_default="0"))
    op.add_column("messages", sa.Column("hidden", sa.Boolean, nullable=False, server_default="0"))
    op.create_table(
        "skill_uses",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("uses", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_used_at", UTCDateTime, nullable=True),
    )
    # Turns left running by an older Hermes have no owner: nobody can finish
    # them any more, so they are closed now rather than keep a session busy.
    op.execute(
        "UPDATE turns SET status = 'finished', stop_reason = 'interrupted', "
        "finished_at = started_at WHERE status = 'running'"
    )


def downgrade() -> None:
    op.drop_table("skill_uses")
    # Native DROP COLUMN (SQLite 3.35+): a batch rebuild of messages would drop
    # the search triggers with the old table.
    for table, column in (
        ("messages", "hidden"),
        ("messages", "partial"),
        ("turns", "heartbeat_at"),
        ("turns", "process_started"),
        ("turns", "host"),
        ("turns", "pid"),
    ):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
