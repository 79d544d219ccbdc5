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


def cut_line(line: str, width: int) -> str:
    """One line made to fit ``width`` terminal cells: whitespace kept (tabs as spaces),
    cut at a word boundary with "…" when too long (mid-word only for one very long word)."""
    from rich.cells import cell_len

    line = printable(line).replace("\n", " ").expandtabs(4)
    width = max(width, 2)
    if cell_len(line) <= width:
        return line
    room = width - 1
    cut = ""
    for char in line:  # the longest start that fits, counted in cells (CJK are two)
        if cell_len(cut) + cell_len(char) > room:
            break
        cut += char
    space = cut.rstrip().rfind(" ")
    if space >= room // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def brief(text: str, limit: int = 100) -> str:
    """``text`` as one printable line of at most ``limit`` characters."""
    line = " ".join(printable(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions``: the count with the word in the right number."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
