"""Bulk writes: the two insert triggers of the search indexes can wait for the batch's end.

Single-row inserts inside one large transaction made FTS5 write a tiny index
segment per message (see ``hermes/store/deferred_index.py``). Both insert
triggers now run only ``WHEN hermes_index_live()``; bulk writers switch them
off for their batch and index the batch with one ``INSERT ... SELECT`` per
index. Then both indexes are merged into one segment each ('optimize'), so
databases filled before this revision stop paying for fragmented indexes at
search time (a bench database of 1M messages in 12 segments searched about
four times slower than in one). Optimizing costs one pass over both indexes,
once: about 40 s at 1M messages on a busy 2-core machine.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# The bodies are 0003's and 0007's (copied: a revision never changes under the
# databases it made); only the WHEN clause is new.
MESSAGES_AI = """
    INSERT INTO messages_fts(rowid, body, tool_output)
    VALUES (new.id, CASE WHEN new.role = 'tool' THEN '' ELSE new.content END,
            CASE WHEN new.role = 'tool' THEN new.content ELSE '' END);
"""
_IDS = (
    "new.id, (SELECT id FROM messages WHERE session_id = new.session_id "
    "AND position = new.position - 1)"
)
MESSAGES_CONTEXT_AI = f"""
    DELETE FROM messages_context_fts WHERE rowid IN ({_IDS});
    INSERT INTO messages_context_fts(rowid, context, literal)
        SELECT id, context, literal FROM messages_context_source WHERE id IN ({_IDS});
"""
TRIGGERS = {"messages_ai": MESSAGES_AI, "messages_context_ai": MESSAGES_CONTEXT_AI}


def upgrade() -> None:
    for name, body in TRIGGERS.items():
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute(
            f"CREATE TRIGGER {name} AFTER INSERT ON messages "
            f"WHEN hermes_index_live() BEGIN {body} END"
        )
    op.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
    op.execute("INSERT INTO messages_context_fts(messages_context_fts) VALUES ('optimize')")


def downgrade() -> None:
    for name, body in TRIGGERS.items():
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute(f"CREATE TRIGGER {name} AFTER INSERT ON messages BEGIN {body} END")
