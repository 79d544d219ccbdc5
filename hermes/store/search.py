"""Full-text search over every message and session summary.

Any text is a valid query. User text never reaches FTS5's MATCH as syntax: it
is cut into words, each word is quoted (so ``AND``, ``NEAR``, ``*``, ``-``,
``:``, parentheses lose their power), stop words are dropped, and the rest is
OR-ed together so BM25 ranks messages by how many of the rarer words they
share. ``"quoted phrases"`` stay phrases. The porter tokenizer makes
"fixed", "fixing" and "fixes" the same word.

Snippets mark matched terms with ``«`` and ``»`` (``MARK_START``/``MARK_END``):
safe in a terminal, rare in chat and code (unlike brackets), and easy for the
web page to turn into ``<mark>`` after HTML-escaping.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sqlalchemy import Connection, text

from hermes.errors import InvalidInput
from hermes.store.values import SearchHit

MARK_START = "«"
MARK_END = "»"
ELLIPSIS = "…"
SNIPPET_TOKENS = 16
MAX_TERMS = 24
MAX_LIMIT = 100
ROLES = ("user", "assistant", "tool", "summary")

_PHRASE = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+")

_STOP_TEXT = """
    a about above after again against all am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn
    doing don down during each few for from further had hadn has hasn have haven having he
    her here hers herself him himself his how i if in into is isn it its itself just ll let
    me more most mustn my myself no nor not now of off on once only or other ought our ours
    ourselves out over own re s same shan she should shouldn so some such t than that the
    their theirs them themselves then there these they this those through to too under
    until up ve very was wasn we were weren what when where which while who whom why will
    with won would wouldn you your yours yourself yourselves d m o y ain also any anything
    something thing things get got ever again back did way like want wanted really maybe
    please tell know remember recall mentioned say said ago us one
    """
STOP_WORDS = frozenset(_STOP_TEXT.split())


def build_match_query(query: str) -> str | None:
    """Turn free text into a safe FTS5 MATCH expression; None when nothing is searchable."""
    phrases: list[list[str]] = []

    def take_phrase(match: re.Match) -> str:
        words = [w.lower() for w in _WORD.findall(match.group(1))]
        if words:
            phrases.append(words)
        return " "

    rest = _PHRASE.sub(take_phrase, query)
    words = [w.lower() for w in _WORD.findall(rest)]
    kept = [w for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]
    if not kept and not phrases:
        # "who are you" is all stop words; searching them beats finding nothing.
        kept = words

    terms: list[str] = []
    for words_of_phrase in phrases:
        terms.append(_quote(" ".join(words_of_phrase)))
    for word in kept:
        quoted = _quote(word)
        if quoted not in terms:
            terms.append(quoted)
    if not terms:
        return None
    return " OR ".join(terms[:MAX_TERMS])


def _quote(words: str) -> str:
    # Inside an FTS5 string only the double quote is special; \w never holds one,
    # but double it anyway so the guarantee does not depend on the regex.
    return '"' + words.replace('"', '""') + '"'


def search(
    connection: Connection,
    query: str,
    *,
    limit: int = 10,
    session_id: int | None = None,
    role: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[SearchHit]:
    """Best matches first: messages and session titles/summaries, one ranked list."""
    if role is not None and role not in ROLES:
        raise InvalidInput(f"Unknown role {role!r}: use one of {', '.join(ROLES)}.")
    limit = max(1, min(int(limit), MAX_LIMIT))
    match = build_match_query(query or "")
    if match is None:
        return []
    params = {
        "match": match,
        "limit": limit,
        "session_id": session_id,
        "role": role,
        "since": _naive_utc(since),
        "until": _naive_utc(until),
        "start": MARK_START,
        "end": MARK_END,
        "ellipsis": ELLIPSIS,
        "tokens": SNIPPET_TOKENS,
    }
    hits: list[SearchHit] = []
    if role != "summary":
        hits += _message_hits(connection, params)
    if role in (None, "summary"):
        hits += _session_hits(connection, params)
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits[:limit]


def _message_hits(connection: Connection, params: dict) -> list[SearchHit]:
    filters = []
    if params["session_id"] is not None:
        filters.append("AND m.session_id = :session_id")
    if params["role"] is not None:
        filters.append("AND m.role = :role")
    if params["since"] is not None:
        filters.append("AND m.created_at >= :since")
    if params["until"] is not None:
        filters.append("AND m.created_at < :until")
    # ORDER BY rank lets FTS5 rank inside the virtual table and compute
    # snippet() only for the rows that survive the LIMIT.
    sql = f"""
        SELECT m.id, m.session_id, m.role, m.created_at, s.title,
               snippet(messages_fts, -1, :start, :end, :ellipsis, :tokens) AS snippet,
               messages_fts.rank AS rank
        FROM messages_fts
        JOIN messages m ON m.id = messages_fts.rowid
        JOIN sessions s ON s.id = m.session_id
        WHERE messages_fts MATCH :match {" ".join(filters)}
        ORDER BY messages_fts.rank
        LIMIT :limit
    """
    rows = connection.execute(text(sql), params).all()
    return [
        SearchHit(
            session_id=row.session_id,
            session_title=row.title,
            message_id=row.id,
            role=row.role,
            snippet=row.snippet,
            created_at=_aware(row.created_at),
            score=round(-row.rank, 4),
        )
        for row in rows
    ]


def _session_hits(connection: Connection, params: dict) -> list[SearchHit]:
    filters = []
    if params["session_id"] is not None:
        filters.append("AND s.id = :session_id")
    if params["since"] is not None:
        filters.append("AND s.updated_at >= :since")
    if params["until"] is not None:
        filters.append("AND s.created_at < :until")
    sql = f"""
        SELECT s.id, s.title, s.updated_at,
               snippet(sessions_fts, -1, :start, :end, :ellipsis, :tokens) AS snippet,
               sessions_fts.rank AS rank
        FROM sessions_fts
        JOIN sessions s ON s.id = sessions_fts.rowid
        WHERE sessions_fts MATCH :match {" ".join(filters)}
        ORDER BY sessions_fts.rank
        LIMIT :limit
    """
    rows = connection.execute(text(sql), params).all()
    return [
        SearchHit(
            session_id=row.id,
            session_title=row.title,
            message_id=None,
            role="summary",
            snippet=row.snippet,
            created_at=_aware(row.updated_at),
            score=round(-row.rank, 4),
        )
        for row in rows
    ]


def _naive_utc(moment: datetime | None) -> str | None:
    # Compared as text against the stored "YYYY-MM-DD HH:MM:SS.ffffff" values.
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat(sep=" ", timespec="microseconds")


def _aware(value) -> datetime:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value
