"""Text that is safe to put on a terminal: no control sequences, bounded length.

Model output, tool output, imported titles and skill files are all hostile
input; a stray escape sequence could recolour, clear or retitle the user's
terminal. Everything the CLI prints from outside goes through ``printable``.
"""

from __future__ import annotations

import re

# ANSI escape sequences (colours, cursor moves, OSC titles) and the remaining
# C0/C1 control characters except newline and tab.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` without escape sequences or control characters; newlines and tabs stay."""
    return _CONTROL.sub("", _ANSI.sub("", text))


def brief(text: str, limit: int = 100) -> str:
    """``text`` as one printable line of at most ``limit`` characters."""
    line = " ".join(printable(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions``: the count with the word in the right number."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
