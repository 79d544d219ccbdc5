"""Characters the word tokenizer cannot find: CJK text and emoji.

SQLite's ``unicode61`` tokenizer keeps a run of CJK characters as one token
(``日本語の勉強`` is a single "word", so ``勉強`` never matches) and drops emoji
as separators. The context index therefore gets a ``literal`` column holding
each CJK character as its own token and each emoji as a word like
``emoji1f389``; a query's CJK run becomes a phrase of its characters, which
finds it anywhere inside a longer run (a substring search). This costs far
less than a trigram index over every message: only messages with CJK or emoji
put anything in the column.

:func:`literal_tokens` runs inside SQLite (registered on every connection as
``hermes_literal``) and on the query side, so both agree.
"""

from __future__ import annotations

import re

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3100-\u312f"  # bopomofo
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002fa1f"  # CJK extensions B-F, compatibility supplement
)
_EMOJI = (
    "\u2600-\u27bf"  # miscellaneous symbols, dingbats
    "\u2b00-\u2bff"  # arrows, stars
    "\U0001f000-\U0001faff"  # emoji blocks, pictographs
)
CJK_RUN = re.compile(f"[{_CJK}]+")
EMOJI = re.compile(f"[{_EMOJI}]")
SPECIAL = re.compile(f"[{_CJK}{_EMOJI}]")


def emoji_token(char: str) -> str:
    return f"emoji{ord(char):x}"


def literal_tokens(text: str | None) -> str:
    """The CJK characters and emoji of ``text`` as space-separated tokens ('' if none)."""
    if not text or not isinstance(text, str) or not SPECIAL.search(text):
        return ""
    parts = []
    for match in SPECIAL.finditer(text):
        char = match.group()
        parts.append(emoji_token(char) if EMOJI.match(char) else char)
    return " ".join(parts)


def query_literals(query: str) -> tuple[list[str], str]:
    """The query's CJK runs (as phrases of characters) and emoji (as tokens), and
    the rest of the query with them blanked out."""
    phrases = [" ".join(run) for run in CJK_RUN.findall(query)]
    phrases += [emoji_token(char) for char in EMOJI.findall(query)]
    rest = SPECIAL.sub(" ", query)
    return phrases, rest


def register(dbapi_connection) -> None:
    """Make ``hermes_literal(text)`` available to the triggers of this connection."""
    dbapi_connection.create_function("hermes_literal", 1, literal_tokens, deterministic=True)
