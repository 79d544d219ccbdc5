"""Full-text search over every message and session summary.

Any text is a valid query. User text never reaches FTS5's MATCH as syntax: it
is cut into words, each word is quoted (so ``AND``, ``NEAR``, ``*``, ``-``,
``:``, parentheses lose their power), stop words are dropped, and the rest is
OR-ed together so BM25 ranks messages by how many of the rarer words they
share. ``"quoted phrases"`` stay phrases. The porter tokenizer makes
"fixed", "fixing" and "fixes" the same word.

Beyond the message's own words, a second index (``messages_context_fts``,
migration 0007) holds what helps find a message: its session's title, when it
was said, who said it, and its neighbours in the conversation; its BM25 adds
to the message's own at ``CONTEXT_WEIGHT``. The same index makes CJK text and
emoji searchable (see ``literal.py``). A word ending in ``*`` is a prefix.

With an :class:`~hermes.embeddings.Embedder`, a semantic ranking (see
``vectors.py``) is fused with the lexical one by score: each candidate gets
``LEXICAL_WEIGHT * bm25 / best bm25 + SEMANTIC_WEIGHT * cosine``. Messages not
yet embedded (a backfill in progress) are ranked as if their cosine were the
average of the embedded lexical candidates', i.e. by their words alone. A
message whose own text holds the words the user typed gets a floor above
every hit by meaning alone (see ``_fused`` and ``_word_matches``).

Snippets mark matched terms with ``«`` and ``»`` (``MARK_START``/``MARK_END``):
safe in a terminal, rare in chat and code (unlike brackets), and easy for the
web page to turn into ``<mark>`` after HTML-escaping. So that every ``«`` in a
snippet is a marker (and marks always pair up), guillemets in the text itself
come out as ``‹`` and ``›``.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime

from sqlalchemy import Connection, text

from hermes.errors import InvalidInput
from hermes.store import vectors
from hermes.store.literal import SPECIAL, query_literals
from hermes.store.values import SearchHit, aware_utc, db_time

log = logging.getLogger(__name__)

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
# A word in this many messages or more is "common" (see _message_hits). BM25
# scores every match of the words it ranks on, so this bounds a search's work:
# at 1M messages 3,000 halved the search's CPU time against 10,000 (and such a
# word's IDF is low: ranking on it picks candidates no better).
COMMON_MATCHES = 3_000
RECENT_WINDOW = 10_000
CANDIDATES = 50
# Fusion (tuned on bench/bench_recall.py's set, see README).
CONTEXT_WEIGHT = 0.35
LEXICAL_WEIGHT = 0.5
SEMANTIC_WEIGHT = 1.0
# Added to a message whose own text holds the query's words (see _fused).
WORD_MATCH_WEIGHT = SEMANTIC_WEIGHT
# In a keyword query, a word in at most this many messages is rare: its messages
# count as word matches (see _word_matches).
RARE_MATCHES = 3
# A message found by meaning alone must be at least this similar to the query.
SEMANTIC_FLOOR = 0.2
SEMANTIC_CANDIDATES = 50
# Above this many messages the context index re-scores candidates but proposes
# none of its own, except for CJK and emoji (see _proposes_candidates).
CONTEXT_PROPOSES_BELOW = 200_000
# ...and then only with words in fewer messages than this.
CONTEXT_COMMON = 1_000
HEAD_CHARS = 120

_PHRASE = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+")
_PREFIX = re.compile(r"(\w+)\*")

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
    return _parse(query)[0]


def _parse(query: str) -> tuple[list[str], set[str]]:
    """The query's terms, and which of them are phrases the user quoted (those
    must be in the message's own text: a neighbour's words never satisfy them)."""
    phrases: list[list[str]] = []

    def take_phrase(match: re.Match) -> str:
        words = [w.lower() for w in _WORD.findall(match.group(1))]
        if words:
            phrases.append(words)
        return " "

    literal_terms, query = query_literals(query)
    rest = _PHRASE.sub(take_phrase, query)
    prefixes = [w.lower() for w in _PREFIX.findall(rest) if len(w) >= 2]
    rest = _PREFIX.sub(" ", rest)
    words = [w.lower() for w in _WORD.findall(rest)]
    kept = [w for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]
    if not kept and not phrases and not prefixes and not literal_terms:
        # "who are you" is all stop words; searching them beats finding nothing.
        kept = words

    terms: list[str] = []
    for words_of_phrase in phrases:
        terms.append(_quote(" ".join(words_of_phrase)))
    for literal in literal_terms:
        terms.append(_quote(literal))
    for prefix in prefixes:
        terms.append(_quote(prefix) + "*")
    for word in kept:
        quoted = _quote(word)
        if quoted not in terms:
            terms.append(quoted)
    quoted = {_quote(" ".join(words_of_phrase)) for words_of_phrase in phrases}
    return list(dict.fromkeys(terms))[:MAX_TERMS], quoted


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
    embedder=None,
    database: str = "",
) -> list[SearchHit]:
    """Best matches first: messages and session titles/summaries, one ranked list.

    ``embedder`` (an :class:`~hermes.embeddings.Embedder`) adds the semantic
    ranking; ``database`` names the database for the in-process vector cache.
    """
    if role is not None and role not in ROLES:
        raise InvalidInput(f"Unknown role {role!r}: use one of {', '.join(ROLES)}.")
    limit = max(1, min(int(limit), MAX_LIMIT))
    terms, quoted = _parse(query or "")
    if not terms:
        return []
    params = {
        "match": " OR ".join(terms),
        "limit": max(CANDIDATES, 3 * limit),
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
    best = 0.0
    fill = 0.0
    if role != "summary":
        # The query's embedding is made on another thread while SQLite ranks the
        # words: both release the GIL, so on two cores they overlap.
        embedding = _embed_soon(connection, query, embedder)
        lexical, found = _lexical(connection, params, terms, quoted)
        semantic = _semantic(connection, embedding, params, embedder, database, lexical)
        best = max(lexical.values(), default=0.0)
        calibrate = _calibration(semantic)
        # Not yet embedded: as similar as the embedded lexical candidates on average.
        known = [calibrate(semantic[i]) for i in lexical if i in semantic]
        fill = sum(known) / len(known) if known else 0.0
        ranked = sorted(semantic.items(), key=lambda item: item[1], reverse=True)
        matched = _word_matches(connection, params, query, terms, list(found))
        scores = {
            message_id: _fused(
                score,
                best,
                calibrate(semantic[message_id]) if message_id in semantic else fill,
                message_id in matched,
            )
            for message_id, score in lexical.items()
        }
        for message_id, cosine in ranked[:SEMANTIC_CANDIDATES]:
            if message_id not in scores and cosine >= SEMANTIC_FLOOR:
                scores[message_id] = _fused(0.0, best, calibrate(cosine))
        top = sorted(scores, key=lambda i: (scores[i], i), reverse=True)[:limit]
        hits += _message_results(connection, top, scores, found, params, query)
    if role in (None, "summary"):
        # A session without a summary matches only on its title, which is usually
        # its first message: already a hit of its own, so don't list it twice.
        sessions = {hit.session_id for hit in hits}
        raw = _session_hits(connection, {**params, "limit": limit})
        best = best or max((hit.score for hit, _ in raw), default=0.0)
        hits += [
            replace(hit, score=round(_fused(hit.score, best, fill), 4))
            for hit, has_summary in raw
            if has_summary or hit.session_id not in sessions
        ]
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits[:limit]


def _fused(lexical: float, best: float, similarity: float, words_match: bool = False) -> float:
    """A candidate's score: its words (BM25 over the best candidate's) plus its
    calibrated similarity, plus WORD_MATCH_WEIGHT when its own text holds the
    words the user typed (see _word_matches).

    WORD_MATCH_WEIGHT is SEMANTIC_WEIGHT, the most meaning can add, so such a
    message outranks every message found by meaning alone: calibration puts
    the nearest neighbour at 1 whatever its cosine, and without this floor a
    rare word the user remembers would sink below vaguely related messages.
    """
    score = LEXICAL_WEIGHT * (lexical / best if best > 0 else 0.0) + SEMANTIC_WEIGHT * similarity
    return score + (WORD_MATCH_WEIGHT if words_match else 0.0)


def _word_matches(
    connection: Connection, params: dict, query: str, terms: list[str], ids: list[int]
) -> set[int]:
    """Which of ``ids`` hold the words the user typed, in their own text: all of
    the query's terms, or, for a keyword query, one rare term (in at most
    RARE_MATCHES messages). These are the messages a user who types a word they
    remember is looking for.

    A question that keeps a single word once stop words are dropped ("how do I
    get to work?") is not asking for every message with "work": there meaning
    ranks as usual. A keyword query is one whose every word is a search term.
    """
    if not ids or not terms:
        return set()
    keyword = not any(word in STOP_WORDS for word in _WORD.findall(query.lower()))
    if not keyword and len(terms) < 2:
        return set()
    listed = ",".join(str(int(i)) for i in ids)  # our own ints
    holding = [
        (
            term,
            set(
                connection.execute(
                    text(
                        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH :term "
                        f"AND rowid IN ({listed})"
                    ),
                    {"term": term},
                ).scalars()
            ),
        )
        for term in terms
    ]
    matched = set.intersection(*(found for _, found in holding))
    if keyword:
        for term, found in holding:
            if found and not _common(connection, params, term, RARE_MATCHES + 1):
                matched |= found
    return matched


def _calibration(semantic: dict[int, float]):
    """Cosines mapped so the best candidate is 1 and the SEMANTIC_CANDIDATES-th is 0.

    Raw cosines of one model sit in a narrow band (0.3-0.6 for everything
    vaguely on topic), so added to a 0-1 lexical score they would barely
    count; what matters is how a message compares with the other candidates.
    """
    if not semantic:
        return lambda cosine: 0.0
    ordered = sorted(semantic.values(), reverse=True)
    top = ordered[0]
    low = ordered[min(len(ordered), SEMANTIC_CANDIDATES) - 1]
    spread = top - low
    if spread <= 1e-6:
        return lambda cosine: 1.0 if cosine >= top else 0.0
    return lambda cosine: max(0.0, (cosine - low) / spread)


def _lexical(
    connection: Connection, params: dict, terms: list[str], quoted: set[str]
) -> tuple[dict[int, float], dict[int, float]]:
    """Lexical scores of the candidate messages (own text plus weighted context),
    and the own-text scores of those whose own text matched."""
    found = _message_hits(connection, params, terms)
    scores = dict(found)
    context_terms = [term for term in terms if term not in quoted]
    context = _context_scores(connection, params, context_terms)
    missing_context = [i for i in found if i not in context]
    if missing_context and context_terms:
        context.update(_context_scores(connection, params, context_terms, rowids=missing_context))
    missing_own = [i for i in context if i not in found]
    if missing_own:
        scores.update(_own_scores(connection, params, missing_own))
    for message_id, score in context.items():
        scores[message_id] = scores.get(message_id, 0.0) + CONTEXT_WEIGHT * score
    return scores, found


def _filters(params: dict) -> str:
    """SQL conditions on ``m`` (the messages row) for the search's filters."""
    filters = []
    if params["session_id"] is not None:
        filters.append("AND m.session_id = :session_id")
    if params["role"] is not None:
        filters.append("AND m.role = :role")
    if params["since"] is not None:
        filters.append("AND m.created_at >= :since")
    if params["until"] is not None:
        filters.append("AND m.created_at < :until")
    return " ".join(filters)


def _context_scores(
    connection: Connection, params: dict, terms: list[str], rowids: list[int] | None = None
) -> dict[int, float]:
    """BM25 of the context index (title, date, speaker, neighbours, CJK, emoji).

    Words common enough to make BM25 slow (see _message_hits) are left out
    here: they say little about context anyway.
    """
    rare = [term for term in terms if not _common(connection, params, term)]
    if not rare:
        return {}
    if rowids is None:
        if not _proposes_candidates(connection, params, rare):
            return {}
        # Proposing ranks every match: leave out words too frequent to say much.
        rare = [term for term in rare if not _common(connection, params, term, CONTEXT_COMMON)]
        if not rare:
            return {}
    listed, ranked = "", "ORDER BY c.rank LIMIT :limit"
    if rowids is not None:
        # Scores of listed candidates: all of them, in any order. Ordering by rank would
        # make FTS5 score every match of the words first (twice the time at 1M messages).
        listed = "AND c.rowid IN (" + ",".join(str(int(i)) for i in rowids) + ")"
        ranked = ""
    filters = _filters(params)
    join = "JOIN messages m ON m.id = c.rowid" if filters else ""
    rows = connection.execute(
        text(
            f"SELECT c.rowid AS id, c.rank AS rank FROM messages_context_fts c {join} "
            f"WHERE messages_context_fts MATCH :match {listed} {filters} {ranked}"
        ),
        {**params, "match": " OR ".join(rare)},
    ).all()
    return {row.id: -row.rank for row in rows}


def _proposes_candidates(connection: Connection, params: dict, rare: list[str]) -> bool:
    """Whether the context index proposes candidates of its own, or only re-scores
    the others'. Neighbours triple a word's matches, so over a large history
    ranking them all would double the search's cost; there the semantic side
    (whose vectors include the turn before) finds replies by their context,
    and the context index only proposes for CJK and emoji, which nothing else finds."""
    if any(SPECIAL.search(term) or term.startswith('"emoji') for term in rare):
        return True
    newest = connection.execute(text("SELECT max(id) FROM messages")).scalar() or 0
    return newest <= CONTEXT_PROPOSES_BELOW


def _common(connection: Connection, params: dict, term: str, cap: int | None = None) -> bool:
    """_is_common (at ``cap`` matches, default COMMON_MATCHES), remembered for this search."""
    cap = cap or COMMON_MATCHES
    memo = params.setdefault("_common", {})
    if (term, cap) not in memo:
        memo[(term, cap)] = _is_common(connection, term, cap)
    return memo[(term, cap)]


def _own_scores(connection: Connection, params: dict, rowids: list[int]) -> dict[int, float]:
    """BM25 of the messages' own text, for candidates found through their context."""
    listed = ",".join(str(int(i)) for i in rowids)
    rows = connection.execute(
        text(
            "SELECT rowid AS id, rank FROM messages_fts "
            f"WHERE messages_fts MATCH :match AND rowid IN ({listed})"
        ),
        params,
    ).all()
    return {row.id: -row.rank for row in rows}


_embedding_pool: ThreadPoolExecutor | None = None
_embedding_pool_lock = threading.Lock()


def _embed_soon(connection: Connection, query: str, embedder) -> tuple[int, Future] | None:
    """Start embedding the query on a pool thread: (its vector space, the future
    vector), or None without an embedder or any vectors of its space (nothing to
    compare with: the query is not embedded at all)."""
    global _embedding_pool
    if embedder is None:
        return None
    space = vectors.space_id(connection, embedder.space, embedder.dim, create=False)
    if space is None:
        return None
    with _embedding_pool_lock:
        if _embedding_pool is None:
            # Threads start only as concurrent searches need them; an endpoint
            # embedder's HTTP calls must not queue behind each other.
            _embedding_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="query-embed")
    return space, _embedding_pool.submit(embedder.embed_one, query)


def _semantic(
    connection: Connection,
    embedding: tuple[int, Future] | None,
    params: dict,
    embedder,
    database: str,
    lexical: dict[int, float],
) -> dict[int, float]:
    """Cosine similarity to the query of the nearest messages and of every lexical
    candidate that has a vector. Empty without an embedder or any vectors."""
    if embedding is None:
        return {}
    from hermes.embeddings import EmbeddingError

    space, pending = embedding
    try:
        query_vector = pending.result()
    except EmbeddingError as exc:
        log.warning("semantic search skipped: %s", exc)
        return {}
    if not query_vector.any():
        return {}
    cache = vectors.cache_for(database, space, embedder.dim)
    cache.refresh(connection, space)
    band = None
    if params["session_id"] is not None:
        low, high = connection.execute(
            text("SELECT min(id), max(id) FROM messages WHERE session_id = :session_id"), params
        ).one()
        if low is None:
            return {}
        band = (low, high)
    found = cache.nearest(query_vector, SEMANTIC_CANDIDATES * 4, band)
    found.update(cache.cosines(query_vector, [i for i in lexical if i not in found]))
    filters = _filters(params)
    nearest_only = [i for i in found if i not in lexical]
    if filters and nearest_only:
        # Lexical candidates were filtered in SQL already; filter the rest the same way.
        listed = ",".join(str(int(i)) for i in nearest_only)
        allowed = set(
            connection.execute(
                text(f"SELECT m.id FROM messages m WHERE m.id IN ({listed}) {filters}"), params
            ).scalars()
        )
        found = {i: c for i, c in found.items() if i in lexical or i in allowed}
    return found


def _message_results(
    connection: Connection,
    ids: list[int],
    scores: dict[int, float],
    found: dict[int, float],
    params: dict,
    query: str,
) -> list[SearchHit]:
    """Hits for the chosen message ids: FTS5's snippet where the message's own
    words matched, else the part of the message that matches literally (CJK,
    emoji, prefixes), else its beginning. Snippets are made here, for the hits
    returned only: FTS5 re-reads and re-tokenizes a message for each one."""
    if not ids:
        return []
    listed = ",".join(str(int(i)) for i in ids)
    rows = {
        row.id: row
        for row in connection.execute(
            text(
                "SELECT m.id, m.session_id, m.role, m.created_at, m.content, s.title "
                f"FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id IN ({listed})"
            )
        )
    }
    snippets = _snippets(connection, params, [i for i in ids if i in found])
    hits = []
    for message_id in ids:
        row = rows.get(message_id)
        if row is None:
            continue
        snippet = snippets.get(message_id)
        if snippet is None:
            snippet = _plain_snippet(row.content, query)
        hits.append(
            SearchHit(
                session_id=row.session_id,
                session_title=row.title,
                message_id=row.id,
                role=row.role,
                snippet=snippet,
                created_at=aware_utc(row.created_at),
                score=round(scores[message_id], 4),
            )
        )
    return hits


def _snippets(connection: Connection, params: dict, ids: list[int]) -> dict[int, str]:
    """FTS5 snippets of these messages (whose own text matches the query)."""
    if not ids:
        return {}
    listed = ",".join(str(int(i)) for i in ids)
    rows = connection.execute(
        text(
            "SELECT rowid AS id, snippet(messages_fts, -1, :start, :end, :ellipsis, :tokens) "
            "AS snippet FROM messages_fts "
            f"WHERE messages_fts MATCH :match AND rowid IN ({listed})"
        ),
        params,
    ).all()
    return {row.id: _snippet(row.snippet) for row in rows}


def _plain_snippet(content: str, query: str) -> str:
    """A snippet made here: around the first literal match of a query piece
    (a CJK run, an emoji, a word or prefix of 3+ letters), marked; else the start."""
    content = " ".join((content or "").split())
    pieces = [match.group() for match in re.finditer(f"{SPECIAL.pattern}+", query)]
    pieces += [w for w in _WORD.findall(SPECIAL.sub(" ", query)) if len(w) >= 3]
    lowered = content.lower()
    for piece in pieces:
        at = lowered.find(piece.lower())
        if at < 0:
            continue
        begin = max(0, at - HEAD_CHARS // 2)
        end = min(len(content), at + len(piece) + HEAD_CHARS // 2)
        before = content[begin:at].translate(_LOOKALIKES)
        marked = content[at : at + len(piece)].translate(_LOOKALIKES)
        after = content[at + len(piece) : end].translate(_LOOKALIKES)
        return (
            (ELLIPSIS if begin else "")
            + f"{before}{MARK_START}{marked}{MARK_END}{after}"
            + (ELLIPSIS if end < len(content) else "")
        )
    head = content[:HEAD_CHARS].translate(_LOOKALIKES)
    return head + (ELLIPSIS if len(content) > HEAD_CHARS else "")


def _message_hits(connection: Connection, params: dict, terms: list[str]) -> dict[int, float]:
    """Ranked message ids with their BM25, with the work bounded however common the words are.

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
            return {}
        return _ranked(
            connection, {**params, "low": low, "high": high}, "rowid BETWEEN :low AND :high"
        )
    common = [term for term in terms if _common(connection, params, term)]
    if not common:
        return _ranked(connection, params)
    newest = connection.execute(text("SELECT max(id) FROM messages")).scalar() or 0
    rare = [term for term in terms if term not in common]
    if not rare:
        return _ranked(connection, {**params, "floor": newest - RECENT_WINDOW}, "rowid > :floor")
    wide = {**params, "match": " OR ".join(rare), "limit": max(CANDIDATES, 3 * params["limit"])}
    candidates = _ranked(connection, wide)
    if not candidates:
        return {}
    # Score the common words on the candidates only: each one found adds its
    # IDF, taken at the threshold (the most a common word can weigh).
    weight = math.log(1 + newest / COMMON_MATCHES)
    listed = ",".join(str(int(message_id)) for message_id in candidates)  # our own ints
    for term in common:
        found = connection.execute(
            text(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH :term "
                f"AND rowid IN ({listed})"
            ),
            {"term": term},
        ).scalars()
        for message_id in found:
            candidates[message_id] += weight
    best = sorted(candidates, key=lambda i: candidates[i], reverse=True)[: params["limit"]]
    return {message_id: round(candidates[message_id], 4) for message_id in best}


def _is_common(connection: Connection, term: str, cap: int | None = None) -> bool:
    """Whether ``term`` is in at least ``cap`` (COMMON_MATCHES) messages (stops counting there)."""
    cap = cap or COMMON_MATCHES
    found = connection.execute(
        text(
            "SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH :term "
            "LIMIT :cap)"
        ),
        {"term": term, "cap": cap},
    ).scalar()
    return found >= cap


def _ranked(
    connection: Connection, params: dict, rowid_filter: str | None = None
) -> dict[int, float]:
    """The best ``limit`` messages by BM25 of their own text: id -> score, best first."""
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
    # Only the filters need the messages row; ORDER BY rank with LIMIT lets
    # FTS5 rank inside the virtual table (snippets come later, for the hits).
    join = (
        "JOIN messages m ON m.id = messages_fts.rowid" if len(filters) > bool(rowid_filter) else ""
    )
    sql = f"""
        SELECT messages_fts.rowid AS id, messages_fts.rank AS rank
        FROM messages_fts {join}
        WHERE messages_fts MATCH :match {" ".join(filters)}
        ORDER BY messages_fts.rank
        LIMIT :limit
    """
    rows = connection.execute(text(sql), params).all()
    return {row.id: round(-row.rank, 4) for row in rows}


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
