"""The file tools: read_file, write_file, edit_file and list_dir (search_files lives in search.py).

Every path goes through :func:`resolve_in_workspace` first, so nothing outside
HERMES_WORKSPACE is read or written, symlinks included. Writes are atomic (a
temporary file in the same folder, then ``os.replace``): a failure never
leaves a file half-written.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from hermes.atomic import replacing
from hermes.errors import ToolError
from hermes.tools.registry import ToolContext, tool
from hermes.tools.search import search_files
from hermes.tools.textfile import SKIP_DIRS, SNIFF_BYTES, is_binary, read_lines
from hermes.tools.workspace import fenced_home, is_inside, relative_name, resolve_in_workspace

EDIT_MAX_BYTES = 10_000_000
LIST_LIMIT = 500  # entries list_dir shows in all
MAX_DEPTH = 3
_NOTE_ROOM = 400  # kept free in an output budget for the closing note


@tool
def read_file(ctx: ToolContext, path: str, start_line: int = 1, end_line: int | None = None) -> str:
    """Read a text file from the workspace, with line numbers.

    Output lines look like "    12<TAB>text". Long files stop at the output
    limit with a note saying which start_line to use next.

    Args:
        path: File path, relative to the workspace (absolute paths inside it work too).
        start_line: First line to show, counting from 1.
        end_line: Last line to show (inclusive); omit to read to the end or the output limit.
    """
    target = _existing_file(ctx, path)
    return read_text_file(
        ctx, target, relative_name(ctx.workspace, target), start_line, end_line, "read_file"
    )


def read_text_file(
    ctx: ToolContext,
    target: Path,
    name: str,
    start_line: int = 1,
    end_line: int | None = None,
    again: str = "read_file",
) -> str:
    """The numbered lines of a text file already checked to be allowed (read_file, use_skill).

    Binary and non-UTF-8 files are refused; output stops at the read limit with a
    note naming ``again``, the tool call that reads on.
    """
    if start_line < 1:
        raise ToolError("start_line counts from 1")
    if end_line is not None and end_line < start_line:
        raise ToolError(f"end_line ({end_line}) is before start_line ({start_line})")
    size = target.stat().st_size
    budget = max(min(ctx.config.read_file_limit, ctx.config.tool_output_limit) - _NOTE_ROOM, 200)
    shown: list[str] = []
    used = 0
    count = 0
    next_line: int | None = None
    with _open(target, name) as f:
        if is_binary(f.read(SNIFF_BYTES)):
            raise ToolError(
                f"{name} looks like a binary file ({size} bytes); read_file shows text only"
            )
        f.seek(0)
        for count, (raw, cut) in enumerate(read_lines(f, budget + 1), start=1):
            if count < start_line:
                continue
            if end_line is not None and count > end_line:
                break
            text = _decode_line(raw, cut, name, count)
            entry = f"{count:>6}\t{text}"
            if used + len(raw) + 8 > budget:
                if not shown:  # one huge line: show its start rather than nothing
                    shown.append(entry[:budget] + " [... line truncated ...]")
                    count += 1
                next_line = count
                break
            if cut:
                entry += " [... line truncated ...]"
            shown.append(entry)
            used += len(raw) + 8
    if not shown:
        if count == 0 and start_line == 1:
            return f"({name} is empty)"
        raise ToolError(f"start_line {start_line} is past the end of {name} ({count} lines)")
    if next_line is not None:
        shown.append(
            f"[output limit reached; {name} is {size} bytes. Call {again} with "
            f"start_line={next_line} (and end_line) to read on.]"
        )
    return "\n".join(shown)


@tool(kind="write")
def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Create or overwrite a text file in the workspace (parent folders are created).

    Args:
        path: File path, relative to the workspace.
        content: The complete new content of the file.
    """
    target = resolve_in_workspace(ctx.workspace, path, home=ctx.config.home)
    name = relative_name(ctx.workspace, target)
    if target.is_dir():
        raise ToolError(f"{name} is a directory; give a file path")
    if path.endswith(("/", os.sep)):
        raise ToolError(f"path {path!r} ends with '/', so it names a folder; give a file path")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("content is not valid Unicode text (it has lone surrogates)") from None
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(f"could not create the folder for {name}: {exc.strerror}") from None
    _atomic_write(ctx, target, name, data)
    return f"Wrote {len(data)} bytes to {name}" + ("" if existed else " (new file)")


@tool(kind="write")
def edit_file(ctx: ToolContext, path: str, old: str, new: str) -> str:
    """Replace one exact piece of text in a file; it must occur exactly once.

    Copy old from read_file output without the line-number prefix,
    including indentation. If it occurs more than once, add surrounding lines
    until it is unique.

    Args:
        path: File path, relative to the workspace.
        old: The exact text to find (whitespace matters).
        new: The text to put in its place.
    """
    target = _existing_file(ctx, path)
    name = relative_name(ctx.workspace, target)
    if not old:
        raise ToolError("old is empty; to create or overwrite a whole file use write_file")
    if old == new:
        raise ToolError("old and new are identical; nothing would change")
    if target.stat().st_size > EDIT_MAX_BYTES:
        raise ToolError(
            f"{name} is larger than {EDIT_MAX_BYTES} bytes; edit it with run_bash instead"
        )
    with _open(target, name) as f:
        data = f.read()
    if is_binary(data[:SNIFF_BYTES]):
        raise ToolError(f"{name} looks like a binary file; edit_file changes text only")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{name} is not UTF-8 text; edit it with run_bash instead") from None

    starts = _find_all(text, old)
    if not starts and "\r\n" in text and "\n" in old and "\r" not in old:
        # The model saw the lines without their CRLF endings; match the file's style.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        starts = _find_all(text, old)
    if not starts:
        raise ToolError(
            f"old text not found in {name}. Use read_file to see the current text and copy "
            "it exactly, including indentation and blank lines (without the line numbers)."
        )
    if len(starts) > 1:
        lines = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts[:20])
        more = ", ..." if len(starts) > 20 else ""
        raise ToolError(
            f"old text occurs {len(starts)} times in {name} (at lines {lines}{more}); include "
            "more surrounding lines in old so that it matches exactly once"
        )
    start = starts[0]
    updated = text[:start] + new + text[start + len(old) :]
    try:
        encoded = updated.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError("new is not valid Unicode text (it has lone surrogates)") from None
    _atomic_write(ctx, target, name, encoded)
    first = text.count("\n", 0, start) + 1
    old_lines = _span(first, old)
    new_lines = _span(first, new) if new else "nothing (deleted)"
    return f"Edited {name}: replaced {old_lines} with {new_lines}"


@tool
def list_dir(ctx: ToolContext, path: str = ".", depth: int = 1) -> str:
    """List a folder of the workspace: folders end in "/", files show their size.

    Args:
        path: Folder path, relative to the workspace.
        depth: How many levels to show, 1 to 3.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise ToolError(f"depth must be between 1 and {MAX_DEPTH}")
    target = resolve_in_workspace(ctx.workspace, path, home=ctx.config.home, must_exist=True)
    name = relative_name(ctx.workspace, target)
    if not target.is_dir():
        raise ToolError(f"{name} is a file, not a folder; use read_file to read it")
    lines = [f"{name}/"]
    root = Path(os.path.realpath(ctx.workspace))
    _list_into(lines, target, root, depth, "  ", fenced_home(root, ctx.config.home))
    if len(lines) == 1:
        lines.append("  (empty)")
    return "\n".join(lines)


# -- helpers -------------------------------------------------------------------


def _existing_file(ctx: ToolContext, path: str) -> Path:
    target = resolve_in_workspace(ctx.workspace, path, home=ctx.config.home, must_exist=True)
    name = relative_name(ctx.workspace, target)
    if target.is_dir():
        raise ToolError(f"{name} is a directory; use list_dir to see what is in it")
    if not target.is_file():
        raise ToolError(f"{name} is not a regular file (a device, socket or pipe)")
    return target


@contextlib.contextmanager
def _open(target: Path, name: str) -> Iterator[BinaryIO]:
    try:
        f = target.open("rb")
    except OSError as exc:
        raise ToolError(f"could not open {name}: {exc.strerror}") from None
    with f:
        yield f


def _decode_line(raw: bytes, cut: bool, name: str, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(raw) - 3:
            return raw[: exc.start].decode("utf-8")
        raise ToolError(
            f"{name} is not UTF-8 text (line {number}); read_file shows text only"
        ) from None


def _atomic_write(ctx: ToolContext, target: Path, name: str, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target``, then rename it into place."""
    root = Path(os.path.realpath(ctx.workspace))
    # The folder was checked before it was created; check again in case a link was swapped in.
    if not is_inside(root, Path(os.path.realpath(target.parent))):
        raise ToolError(f"{name} is outside the workspace (HERMES_WORKSPACE={root})")
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o644
    try:
        with replacing(target, binary=True, mode=mode) as f:
            f.write(data)
    except OSError as exc:
        raise ToolError(f"could not write {name}: {exc.strerror}") from None


def _find_all(text: str, needle: str) -> list[int]:
    starts = []
    at = text.find(needle)
    while at != -1:
        starts.append(at)
        at = text.find(needle, at + len(needle))
    return starts


def _span(first: int, text: str) -> str:
    last = first + text.count("\n") - (1 if text.endswith("\n") else 0)
    return f"line {first}" if last <= first else f"lines {first}-{last}"


def _list_into(
    lines: list[str], folder: Path, root: Path, depth: int, indent: str, fence: Path | None
) -> bool:
    """Append ``folder``'s entries to ``lines``; True once LIST_LIMIT is reached.

    ``fence`` (Hermes' data folder) is named but never expanded."""
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        lines.append(f"{indent}[cannot list: {exc.strerror}]")
        return False
    entries.sort(key=lambda e: (not e.is_dir(follow_symlinks=False), e.name))
    for i, entry in enumerate(entries):
        if len(lines) > LIST_LIMIT:
            lines.append(f"{indent}... {len(entries) - i} more")
            return True
        if entry.is_symlink():
            lines.append(f"{indent}{entry.name}@ -> {_link_target(entry.path, root)}")
        elif fence is not None and Path(entry.path) == fence:
            lines.append(f"{indent}{entry.name}/ (Hermes' data folder, not shown)")
        elif entry.is_dir(follow_symlinks=False):
            skipped = entry.name in SKIP_DIRS and depth > 1
            lines.append(f"{indent}{entry.name}/" + (" (not expanded)" if skipped else ""))
            expand = depth > 1 and not skipped
            deeper = Path(entry.path)
            if expand and _list_into(lines, deeper, root, depth - 1, indent + "  ", fence):
                return True
        else:
            try:
                size = _human_size(entry.stat(follow_symlinks=False).st_size)
            except OSError:
                size = "?"
            lines.append(f"{indent}{entry.name}  {size}")
    return False


def _link_target(link: str, root: Path) -> str:
    """Where a symlink points, without naming places outside the workspace."""
    resolved = Path(os.path.realpath(link))
    if not is_inside(root, resolved):
        return "(outside the workspace)"
    return relative_name(root, resolved) + ("/" if resolved.is_dir() else "")


def _human_size(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


__all__ = ["edit_file", "list_dir", "read_file", "read_text_file", "search_files", "write_file"]
