"""Recall: a context index beside the message index, and message vectors.

``messages_context_fts`` indexes, for each conversation message, what helps
find it but is not its own text: its session's title, the month and year it
was said, the speaker, and the start of the messages just before and after it
(``context``); plus its CJK characters and emoji as tokens (``literal``, see
``hermes/store/literal.py``). Search adds its BM25 to the message's own, but
still returns and snippets the message itself.

It is a regular FTS5 table (it stores its own copy of the context) because a
message's context changes when its neighbour arrives or its session is
renamed, and this SQLite (3.40) can only delete rows of an external-content or
contentless table by repeating the exact text indexed.

``message_vectors`` holds one embedding per message and vector space (int8,
see ``hermes/store/vectors.py``), written by the background indexer and
``hermes db reindex``; a message's vector is dropped when its text changes.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TOKENIZE = "porter unicode61 remove_diacritics 2"
NEIGHBOUR_CHARS = 300
MONTHS = " ".join(
    f"WHEN '{n:02d}' THEN '{name}'"
    for n, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
)


def _neighbour(offset: str) -> str:
    return (
        f"coalesce((SELECT substr(n.content, 1, {NEIGHBOUR_CHARS}) FROM messages n "
        f"WHERE n.session_id = m.session_id AND n.position = m.position {offset} 1 "
        "AND n.role != 'tool'), '')"
    )


CONTEXT = f"""
    CASE WHEN m.role = 'tool' THEN '' ELSE
        coalesce(s.title, '') || ' ' ||
        (CASE strftime('%m', m.created_at) {MONTHS} ELSE '' END) || ' ' ||
        coalesce(strftime('%Y', m.created_at), '') || ' ' || m.role || ' ' ||
        {_neighbour("-")} || ' ' || {_neighbour("+")}
    END
"""

# The message (by id or by place) and its conversation neighbours.
PREVIOUS = (
    "(SELECT id FROM messages WHERE session_id = {t}.session_id AND position = {t}.position - 1)"
)
NEXT = "(SELECT id FROM messages WHERE session_id = {t}.session_id AND position = {t}.position + 1)"


def _refresh(ids: str) -> str:
    return f"""
        DELETE FROM messages_context_fts WHERE rowid IN ({ids});
        INSERT INTO messages_context_fts(rowid, context, literal)
            SELECT id, context, literal FROM messages_context_source WHERE id IN ({ids});
    """


UPGRADE = [
    f"""
    CREATE VIEW messages_context_source AS
    SELECT m.id AS id, {CONTEXT} AS context, hermes_literal(m.content) AS literal
    FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE m.role != 'tool' OR hermes_literal(m.content) != ''
    """,
    f"""
    CREATE VIRTUAL TABLE messages_context_fts USING fts5(
        context, literal, tokenize='{TOKENIZE}'
    )
    """,
    "INSERT INTO messages_context_fts(messages_context_fts, rank) VALUES ('rank', 'bm25(1.0, 2.0)')",
    f"""
    CREATE TRIGGER messages_context_ai AFTER INSERT ON messages BEGIN
        {_refresh(f"new.id, {PREVIOUS.format(t='new')}")}
    END
    """,
    f"""
    CREATE TRIGGER messages_context_au AFTER UPDATE OF content, role ON messages BEGIN
        {_refresh(f"new.id, {PREVIOUS.format(t='new')}, {NEXT.format(t='new')}")}
        DELETE FROM message_vectors WHERE message_id = new.id;
    END
    """,
    f"""
    CREATE TRIGGER messages_context_ad AFTER DELETE ON messages BEGIN
        DELETE FROM messages_context_fts WHERE rowid = old.id;
        {_refresh(f"{PREVIOUS.format(t='old')}, {NEXT.format(t='old')}")}
    END
    """,
    f"""
    CREATE TRIGGER sessions_context_au AFTER UPDATE OF title ON sessions BEGIN
        {_refresh("SELECT id FROM messages WHERE session_id = new.id")}
    END
    """,
    """
    INSERT INTO messages_context_fts(rowid, context, literal)
    SELECT id, context, literal FROM messages_context_source
    """,
]

DOWNGRADE = [
    "DROP TRIGGER IF EXISTS sessions_context_au",
    "DROP TRIGGER IF EXISTS messages_context_ad",
    "DROP TRIGGER IF EXISTS messages_context_au",
    "DROP TRIGGER IF EXISTS messages_context_ai",
    "DROP TABLE IF EXISTS messages_context_fts",
    "DROP VIEW IF EXISTS messages_context_source",
]


def upgrade() -> None:
    op.create_table(
        "embedding_spaces",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("dim", sa.Integer, nullable=False),
    )
    op.create_index("ix_embedding_spaces_name", "embedding_spaces", ["name"], unique=True)
    op.create_table(
        "message_vectors",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column(
            "space_id",
            sa.Integer,
            sa.ForeignKey("embedding_spaces.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "message_id",
            sa.Integer,
            sa.ForeignKey("messages.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("vector", sa.LargeBinary, nullable=False),
    )
    op.create_index(
        "ix_message_vectors_space_message",
        "message_vectors",
        ["space_id", "message_id"],
        unique=True,
    )
    op.create_index("ix_message_vectors_message", "message_vectors", ["message_id"])
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
    op.drop_index("ix_message_vectors_message", "message_vectors")
    op.drop_index("ix_message_vectors_space_message", "message_vectors")
    op.drop_table("message_vectors")
    op.drop_index("ix_embedding_spaces_name", "embedding_spaces")
    op.drop_table("embedding_spaces")
