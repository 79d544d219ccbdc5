"""search_files: a regular expression over the text files of the workspace.

The model writes the pattern, so it may backtrack catastrophically (``(a|a)+$``
needs 2**n steps on n letters). Python's ``re`` would hold the GIL for the
whole match and freeze every thread of the server, Stop included. The
``regex`` package matches with the GIL released (``concurrent=True``) and
gives up after a timeout: each line gets at most SEARCH_MATCH_TIME_LIMIT
seconds, so Stop is seen within about that long, and a pattern that needs
more ends the search with the results found so far and a note saying why.
The work per line is bounded too (only the first SEARCH_LINE_CHARS characters
are matched, big and binary files are skipped), and the whole search stops
after SEARCH_TIME_LIMIT.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import regex

from hermes.errors import Cancelled, ToolError
from hermes.tools.output import clean_text
from hermes.tools.registry import ToolContext, tool
from hermes.tools.textfile import SKIP_DIRS, SNIFF_BYTES, read_lines
from hermes.tools.workspace import fenced_home, relative_name, resolve_in_workspace

SEARCH_MAX_FILE_BYTES = 2_000_000
SEARCH_LINE_CHARS = 2_000  # only this much of a line is matched (bounds regex work)
SEARCH_SHOW_CHARS = 300  # this much of a matching line is shown
SEARCH_TIME_LIMIT = 30.0
# Seconds one line's match may take (the regex package counts CPU time). A sane
# pattern needs microseconds on 2,000 characters; only backtracking needs this.
SEARCH_MATCH_TIME_LIMIT = 1.0
TOO_SLOW = (
    "the pattern took too long: simplify it (nested repeats such as (a+)+ or (a|a)+ backtrack)"
)
_NOTE_ROOM = 400  # kept free in the output budget for the closing note


@tool
def search_files(ctx: ToolContext, pattern: str, path: str = ".", glob: str | None = None) -> str:
    """Search text files in the workspace for a regular expression (Python syntax).

    Results are "path:line: text". Binary files, files over 2 MB and folders
    such as .git, node_modules and .venv are skipped.

    Args:
        pattern: Regular expression, e.g. "def \\w+_file" or "TODO|FIXME".
        path: File or folder to search, relative to the workspace.
        glob: Only files whose name (or path below the searched folder) matches, e.g. "*.py".
    """
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise ToolError(
            f"invalid regular expression {pattern!r}: {exc}. Escape special characters "
            "such as ( [ . * + ? with a backslash to match them literally."
        ) from None
    start = resolve_in_workspace(ctx.workspace, path, home=ctx.config.home, must_exist=True)
    root = Path(os.path.realpath(ctx.workspace))
    fence = fenced_home(root, ctx.config.home)
    limit = ctx.config.search_results_limit
    budget = ctx.config.tool_output_limit - _NOTE_ROOM
    deadline = time.monotonic() + SEARCH_TIME_LIMIT
    results: list[str] = []
    used = 0
    searched = skipped = 0
    stopped = ""
    for file in _files_under(start, glob, fence):
        if ctx.cancel.is_set():
            raise Cancelled("search_files was cancelled by the user")
        if time.monotonic() > deadline:
            stopped = f"search stopped after {SEARCH_TIME_LIMIT:g} s"
            break
        rel = relative_name(root, file)
        found = _search_file(file, compiled, deadline, ctx.cancel)
        if found is None:
            skipped += 1
            continue
        hits, slow_line = found
        searched += 1
        if slow_line is not None:
            stopped = f"{TOO_SLOW}; stopped at {rel}:{slow_line}"
        for number, text in hits:
            line = f"{rel}:{number}: {text}"
            if len(results) >= limit or used + len(line) > budget:
                stopped = f"results capped at {len(results)}"
                break
            results.append(line)
            used += len(line) + 1
        if stopped:
            break
    if ctx.cancel.is_set():
        raise Cancelled("search_files was cancelled by the user")
    name = relative_name(root, start)
    skipped_note = f"; skipped {skipped} binary or large file(s)" if skipped else ""
    if not results and stopped.startswith(TOO_SLOW):
        raise ToolError(f"no matches before {stopped}")
    if not results:
        return f"No matches for {pattern!r} in {name} ({searched} file(s) searched{skipped_note})"
    if stopped:
        results.append(f"[{stopped}; narrow the pattern, path or glob to see the rest]")
    return "\n".join(results)


def _files_under(start: Path, glob: str | None, fence: Path | None = None) -> Iterator[Path]:
    """Regular files below ``start`` in a stable order; links are not followed, and
    ``fence`` (Hermes' data folder) is not entered."""
    if not start.is_dir():
        if glob is None or _glob_matches(start.name, glob):
            yield start
        return
    for dirpath, dirnames, filenames in os.walk(start):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and Path(dirpath, d) != fence
        )
        for filename in sorted(filenames):
            file = Path(dirpath, filename)
            try:
                info = file.lstat()
            except OSError:
                continue
            # Links are skipped: one may point outside the workspace, and a link to a
            # file inside is searched where it really lives. FIFOs would block.
            if not stat.S_ISREG(info.st_mode):
                continue
            if glob is None or _glob_matches(file.relative_to(start).as_posix(), glob):
                yield file


def _glob_matches(relative: str, glob: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    if "/" not in glob:
        return fnmatch.fnmatchcase(name, glob)
    if glob.startswith("**/") and fnmatch.fnmatchcase(relative, glob[3:]):
        return True
    return fnmatch.fnmatchcase(relative, glob)


def _search_file(
    file: Path, compiled: regex.Pattern, deadline: float, cancel
) -> tuple[list[tuple[int, str]], int | None] | None:
    """Matching (line number, shown text) pairs and the number of the line whose
    match took too long (None if none did); None when the file is skipped.

    Stops early, with what it has, at the search's deadline or on Stop.
    """
    try:
        if file.stat().st_size > SEARCH_MAX_FILE_BYTES:
            return None
        f = file.open("rb")
    except OSError:
        return None
    hits: list[tuple[int, str]] = []
    with f:
        if b"\x00" in f.read(SNIFF_BYTES):
            return None
        f.seek(0)
        for number, (raw, _cut) in enumerate(read_lines(f, SEARCH_LINE_CHARS * 4), start=1):
            left = deadline - time.monotonic()
            if left <= 0 or cancel.is_set():
                break
            line = raw.decode("utf-8", errors="replace")[:SEARCH_LINE_CHARS]
            allowed = min(SEARCH_MATCH_TIME_LIMIT, left)
            try:
                # concurrent=True: the GIL is released, so other threads (the whole
                # server) keep running while this line is matched.
                match = compiled.search(line, timeout=allowed, concurrent=True)
            except TimeoutError:
                if allowed < SEARCH_MATCH_TIME_LIMIT:
                    break  # the whole search ran out of time, not this pattern
                return hits, number
            if match:
                hits.append((number, _excerpt(line, match.start())))
    return hits, None


def _excerpt(line: str, at: int) -> str:
    text = clean_text(line)
    if len(text) <= SEARCH_SHOW_CHARS:
        return text.strip()
    begin = max(0, min(at - SEARCH_SHOW_CHARS // 3, len(text) - SEARCH_SHOW_CHARS))
    piece = text[begin : begin + SEARCH_SHOW_CHARS]
    return (
        ("..." if begin else "")
        + piece.strip()
        + ("..." if begin + SEARCH_SHOW_CHARS < len(text) else "")
    )
