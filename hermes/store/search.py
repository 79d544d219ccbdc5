"""Full-text search over every message and session summary.

Any text is a valid query. User text never reaches FTS5's MATCH as syntax: it
is cut into words, each word is quoted (so ``AND``, ``NEAR``, ``*``, ``-``,
``:``, parentheses lose their power), stop words are dropped, and the rest is
OR-ed together so BM25 ranks messages by how many of the rarer words they
share. ``"quoted phrases"`` stay phrases. The porter tokenizer makes
"fixed", "fixing" and "fixes" the same word.

Snippets mark matched terms with ``«`` and ``»`` (``MARK_START``/``MARK_END``):
safe in a terminal, rare in chat and code (unlike brackets), and easy for the
web page to turn into ``<mark>`` after HTML-escaping. So that every ``«`` in a
snippet is a marker (and marks always pair up), guillemets in the text itself
come out as ``‹`` and ``›``.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from datetime import datetime

from sqlalchemy import Connection, text

from hermes.errors import InvalidInput
from hermes.store.values import SearchHit, aware_utc, db_time

MARK_START = "«"
MARK_END = "»"
ELLIPSIS = "…"
# FTS5 marks matches with these private-use characters first; see _snippet().
_START, _END = "\ue000", "\ue001"
_LOOKALIKES = str.maketrans({MARK_START: "‹", MARK_END: "›", _START: None, _END: None})
SNIPPET_TOKENS = 16
MAX_TERMS = 24
MAX_LIMIT = 100
ROLES = ("user", "assistant", "tool", "summary")
# A word in this many messages or more is "common" (see _message_hits).
COMMON_MATCHES = 10_000
RECENT_WINDOW = 10_000
CANDIDATES = 50

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
    terms = query_terms(query)
    return " OR ".join(terms) if terms else None


def query_terms(query: str) -> list[str]:
    """The quoted FTS5 strings (words and phrases) a free-text query searches for."""
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
    return terms[:MAX_TERMS]


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
    terms = query_terms(query or "")
    if not terms:
        return []
    params = {
        "match": " OR ".join(terms),
        "limit": limit,
        "session_id": session_id,
        "role": role,
        "since": db_time(since) if since else None,
        "until": db_time(until) if until else None,
        "start": _START,
        "end": _END,
        "ellipsis": ELLIPSIS,
        "tokens": SNIPPET_TOKENS,
    }
    hits: list[SearchHit] = []
    if role != "summary":
        hits += _message_hits(connection, params, terms)
    if role in (None, "summary"):
        # A session without a summary matches only on its title, which is usually
        # its first message: already a hit of its own, so don't list it twice.
        found = {hit.session_id for hit in hits}
        hits += [
            hit
            for hit, has_summary in _session_hits(connection, params)
            if has_summary or hit.session_id not in found
        ]
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits[:limit]


def _message_hits(connection: Connection, params: dict, terms: list[str]) -> list[SearchHit]:
    """Ranked message hits, with the work bounded however common the words are.

    BM25 has to score every message that matches any word, so a word found in
    a large share of a million messages would cost hundreds of milliseconds.
    Such words carry little weight in BM25 anyway (low IDF), so: rank on the
    rarer words to pick candidates, then add each common word's weight to the
    candidates containing it. A query made only of very common words is
    ranked among the newest ``RECENT_WINDOW`` messages.
    """
    if params["session_id"] is not None:
        # One session's messages sit in a narrow band of ids: search only that band.
        low, high = connection.execute(
            text("SELECT min(id), max(id) FROM messages WHERE session_id = :session_id"), params
        ).one()
        if low is None:
            return []
        return _ranked(
            connection, {**params, "low": low, "high": high}, "rowid BETWEEN :low AND :high"
        )
    common = [term for term in terms if _is_common(connection, term)]
    if not common:
        return _ranked(connection, params)
    newest = connection.execute(text("SELECT max(id) FROM messages")).scalar() or 0
    rare = [term for term in terms if term not in common]
    if not rare:
        return _ranked(connection, {**params, "floor": newest - RECENT_WINDOW}, "rowid > :floor")
    wide = {**params, "match": " OR ".join(rare), "limit": max(CANDIDATES, 3 * params["limit"])}
    candidates = {hit.message_id: hit for hit in _ranked(connection, wide)}
    if not candidates:
        return []
    # Score the common words on the candidates only: each one found adds its
    # IDF, taken at the threshold (the most a common word can weigh).
    weight = math.log(1 + newest / COMMON_MATCHES)
    listed = ",".join(str(int(message_id)) for message_id in candidates)  # our own ints
    bonus = dict.fromkeys(candidates, 0.0)
    for term in common:
        found = connection.execute(
            text(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH :term "
                f"AND rowid IN ({listed})"
            ),
            {"term": term},
        ).scalars()
        for message_id in found:
            bonus[message_id] += weight
    rescored = [
        replace(hit, score=round(hit.score + bonus[message_id], 4))
        for message_id, hit in candidates.items()
    ]
    rescored.sort(key=lambda hit: hit.score, reverse=True)
    return rescored[: params["limit"]]


def _is_common(connection: Connection, term: str) -> bool:
    """Whether ``term`` is in at least COMMON_MATCHES messages (stops counting there)."""
    found = connection.execute(
        text(
            "SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH :term "
            "LIMIT :cap)"
        ),
        {"term": term, "cap": COMMON_MATCHES},
    ).scalar()
    return found >= COMMON_MATCHES


def _ranked(
    connection: Connection, params: dict, rowid_filter: str | None = None
) -> list[SearchHit]:
    filters = []
    if rowid_filter:
        filters.append(f"AND messages_fts.{rowid_filter}")
    if params["session_id"] is not None:
        # The id band narrows the scan; interleaved sessions share it.
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
            snippet=_snippet(row.snippet),
            created_at=aware_utc(row.created_at),
            score=round(-row.rank, 4),
        )
        for row in rows
    ]


def _session_hits(connection: Connection, params: dict) -> list[tuple[SearchHit, bool]]:
    """Session title/summary hits, each with whether the session has a summary."""
    filters = []
    if params["session_id"] is not None:
        filters.append("AND s.id = :session_id")
    if params["since"] is not None:
        filters.append("AND s.updated_at >= :since")
    if params["until"] is not None:
        filters.append("AND s.created_at < :until")
    sql = f"""
        SELECT s.id, s.title, s.updated_at, s.summary,
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
        (
            SearchHit(
                session_id=row.id,
                session_title=row.title,
                message_id=None,
                role="summary",
                snippet=_snippet(row.snippet),
                created_at=aware_utc(row.updated_at),
                score=round(-row.rank, 4),
            ),
            bool(row.summary),
        )
        for row in rows
    ]


def _snippet(raw: str | None) -> str:
    """FTS5's snippet with the text's own guillemets swapped for lookalikes, then
    the match markers turned into ``«`` and ``»``: only markers are guillemets."""
    parts = (raw or "").split(_START)
    text = parts[0].translate(_LOOKALIKES)
    for part in parts[1:]:
        marked, _, rest = part.partition(_END)
        marked = marked.translate(_LOOKALIKES)
        # A stray private-use character in the text could open an empty mark.
        text += f"{MARK_START}{marked}{MARK_END}" if marked.strip() else marked
        text += rest.translate(_LOOKALIKES)
    return text
