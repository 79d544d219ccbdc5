"""Telling text from binary, and reading lines with bounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

SNIFF_BYTES = 8192  # a NUL byte in this much of the start means binary
# Never worth searching or expanding: tool caches, dependencies, VCS internals.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache"}
    | {".pytest_cache", ".ruff_cache", ".tox"}
)


def is_binary(sample: bytes) -> bool:
    """True for data that is not UTF-8 text: a NUL byte, or bytes that do not decode."""
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A character cut in half at the end of the sample is not evidence.
        return not (exc.reason == "unexpected end of data" and len(sample) >= SNIFF_BYTES - 4)
    return False


def read_lines(f: BinaryIO, cap: int) -> Iterator[tuple[bytes, bool]]:
    """Yield (line, was_cut) with at most ``cap`` bytes of each line held in memory."""
    while True:
        chunk = f.readline(cap)
        if not chunk:
            return
        if chunk.endswith(b"\n") or len(chunk) < cap:
            yield chunk.rstrip(b"\n").rstrip(b"\r"), False
            continue
        while True:  # skip the rest of an overlong line
            rest = f.readline(cap)
            if not rest or rest.endswith(b"\n"):
                break
        yield chunk, True
