"""Full-text search: FTS5 indexes over messages and session titles/summaries.

Both are external-content tables (the text lives once, in the base tables)
kept in sync by triggers. Messages feed the index through a view that puts
conversation text (user/assistant) and tool output in separate columns, so
BM25 can weigh what people said above what tools printed. ``context`` is never
indexed.

Revision ID: 0003
Revises: 0002
Create Date: 2025-01-03
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TOKENIZE = "porter unicode61 remove_diacritics 2"

BODY = "CASE WHEN {t}.role = 'tool' THEN '' ELSE {t}.content END"
TOOL = "CASE WHEN {t}.role = 'tool' THEN {t}.content ELSE '' END"

UPGRADE = [
    f"""
    CREATE VIEW messages_search_source AS
    SELECT id, {BODY.format(t="messages")} AS body, {TOOL.format(t="messages")} AS tool_output
    FROM messages
    """,
    f"""
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        body, tool_output,
        content='messages_search_source', content_rowid='id',
        tokenize='{TOKENIZE}'
    )
    """,
    # Default ranking: conversation text counts about three times tool output.
    "INSERT INTO messages_fts(messages_fts, rank) VALUES ('rank', 'bm25(1.0, 0.3)')",
    f"""
    CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, body, tool_output)
        VALUES (new.id, {BODY.format(t="new")}, {TOOL.format(t="new")});
    END
    """,
    f"""
    CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, body, tool_output)
        VALUES ('delete', old.id, {BODY.format(t="old")}, {TOOL.format(t="old")});
    END
    """,
    f"""
    CREATE TRIGGER messages_au AFTER UPDATE OF content, role ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, body, tool_output)
        VALUES ('delete', old.id, {BODY.format(t="old")}, {TOOL.format(t="old")});
        INSERT INTO messages_fts(rowid, body, tool_output)
        VALUES (new.id, {BODY.format(t="new")}, {TOOL.format(t="new")});
    END
    """,
    "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
    f"""
    CREATE VIRTUAL TABLE sessions_fts USING fts5(
        title, summary,
        content='sessions', content_rowid='id',
        tokenize='{TOKENIZE}'
    )
    """,
    "INSERT INTO sessions_fts(sessions_fts, rank) VALUES ('rank', 'bm25(0.5, 1.0)')",
    """
    CREATE TRIGGER sessions_ai AFTER INSERT ON sessions BEGIN
        INSERT INTO sessions_fts(rowid, title, summary)
        VALUES (new.id, coalesce(new.title, ''), coalesce(new.summary, ''));
    END
    """,
    """
    CREATE TRIGGER sessions_ad AFTER DELETE ON sessions BEGIN
        INSERT INTO sessions_fts(sessions_fts, rowid, title, summary)
        VALUES ('delete', old.id, coalesce(old.title, ''), coalesce(old.summary, ''));
    END
    """,
    # Only title/summary changes touch the index; updated_at changes on every
    # message and must stay cheap.
    """
    CREATE TRIGGER sessions_au AFTER UPDATE OF title, summary ON sessions BEGIN
        INSERT INTO sessions_fts(sessions_fts, rowid, title, summary)
        VALUES ('delete', old.id, coalesce(old.title, ''), coalesce(old.summary, ''));
        INSERT INTO sessions_fts(rowid, title, summary)
        VALUES (new.id, coalesce(new.title, ''), coalesce(new.summary, ''));
    END
    """,
    "INSERT INTO sessions_fts(sessions_fts) VALUES ('rebuild')",
]

DOWNGRADE = [
    "DROP TRIGGER IF EXISTS sessions_au",
    "DROP TRIGGER IF EXISTS sessions_ad",
    "DROP TRIGGER IF EXISTS sessions_ai",
    "DROP TABLE IF EXISTS sessions_fts",
    "DROP TRIGGER IF EXISTS messages_au",
    "DROP TRIGGER IF EXISTS messages_ad",
    "DROP TRIGGER IF EXISTS messages_ai",
    "DROP TABLE IF EXISTS messages_fts",
    "DROP VIEW IF EXISTS messages_search_source",
]


def upgrade() -> None:
    for statement in UPGRADE:
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
