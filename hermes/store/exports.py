"""Exports: JSON (which ``hermes import hermes`` reads back) and Markdown.

The JSON export is a top-level array with one object per session, so the
importer can stream it like the ChatGPT and Claude files. Files are written
atomically: a temporary file next to the target, renamed into place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.atomic import replacing
from hermes.errors import InvalidInput, StoreError
from hermes.store.formats import EXPORT_VERSION
from hermes.store.store import Store
from hermes.store.values import SessionInfo, StoredMessage, iso, tool_calls_to_list

EXPORT_FORMATS = ("json", "markdown")


@dataclass(frozen=True)
class ExportResult:
    path: Path | None
    sessions: int
    messages: int


def _exact(moment):
    # Exports keep microseconds so a round trip restores timestamps exactly.
    return iso(moment, "microseconds")


def session_to_dict(session: SessionInfo, messages: list[StoredMessage]) -> dict[str, Any]:
    """One session in the JSON export format, every field needed to restore it."""
    return {
        "hermes_export": EXPORT_VERSION,
        "uid": session.uid,
        "external_id": session.external_id,
        "id": session.id,
        "title": session.title,
        "source": session.source,
        "created_at": _exact(session.created_at),
        "updated_at": _exact(session.updated_at),
        "summary": session.summary,
        "model": session.model,
        "system_prompt": session.system_prompt,
        "messages": [
            {
                "id": stored.id,
                "role": stored.message.role,
                "content": stored.message.content,
                "tool_calls": tool_calls_to_list(stored.message.tool_calls),
                "tool_call_id": stored.message.tool_call_id,
                "tool_name": stored.message.tool_name,
                "is_error": stored.message.is_error,
                "context": stored.message.context,
                "created_at": _exact(stored.created_at),
            }
            for stored in messages
        ],
    }


def session_to_markdown(session: SessionInfo, messages: list[StoredMessage]) -> str:
    """One session as readable Markdown (tool calls and results in code fences)."""
    # A heading is one line: a title with newlines would spill into the body.
    title = " ".join((session.title or "").split()) or f"Session {session.id}"
    lines = [f"# {title}", ""]
    lines.append(
        f"_Session {session.id} · {session.source} · created {iso(session.created_at)} · "
        f"updated {iso(session.updated_at)}_"
    )
    lines.append("")
    if session.summary:
        lines += [f"> {line}" for line in session.summary.splitlines()] + [""]
    for stored in messages:
        m = stored.message
        when = iso(stored.created_at)
        if m.role == "tool":
            label = "Tool error" if m.is_error else "Tool result"
            lines += [
                f"### {label} ({m.tool_name or 'tool'}) · {when}",
                "",
                _fenced(m.content, ""),
                "",
            ]
            continue
        lines += [f"### {m.role.capitalize()} · {when}", ""]
        if m.content:
            lines += [m.content, ""]
        for call in m.tool_calls:
            body = json.dumps(call.input, indent=2, ensure_ascii=False)
            lines += [f"**Tool call** `{call.name}`", "", _fenced(body, "json"), ""]
    return "\n".join(lines).rstrip() + "\n"


def iter_export(
    store: Store, fmt: str, session_id: int | None = None, *, counts: list[int] | None = None
) -> Iterator[str]:
    """The export as text chunks, one session at a time (all sessions when no id).

    ``counts``, if given, is a two-item list updated with sessions and messages written.
    """
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput(f"Unknown export format {fmt!r}: use json or markdown.")
    if session_id is not None:
        store.get_session(session_id)  # NotFound before any output
    ids = [session_id] if session_id is not None else store.session_ids()
    if fmt == "json":
        yield "["
    for n, current in enumerate(ids):
        session = store.get_session(current)
        messages = list(store.iter_messages(current))
        if fmt == "json":
            data = json.dumps(session_to_dict(session, messages), ensure_ascii=False, indent=1)
            yield ("\n" if n == 0 else ",\n") + data
        else:
            yield ("" if n == 0 else "\n---\n\n") + session_to_markdown(session, messages)
        if counts is not None:
            counts[0] += 1
            counts[1] += len(messages)
    if fmt == "json":
        yield "\n]\n"


def export_text(store: Store, fmt: str, session_id: int | None = None) -> str:
    """The whole export as one string (the web's download endpoint)."""
    return "".join(iter_export(store, fmt, session_id))


def write_export(store: Store, path: Path, fmt: str, session_id: int | None = None) -> ExportResult:
    """Write the export to ``path`` atomically; the old file stays intact on failure.

    Missing folders on the way to ``path`` are created.
    """
    path = Path(path)
    if path.is_dir():
        raise InvalidInput(
            f"{path} is a folder; give a file name, e.g. {path / 'hermes-export.json'}."
        )
    directory = path.parent if str(path.parent) else Path(".")
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput(f"Unknown export format {fmt!r}: use json or markdown.")
    if session_id is not None:
        store.get_session(session_id)  # NotFound before any folder or file is made
    counts = [0, 0]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with replacing(path) as out:
            for chunk in iter_export(store, fmt, session_id, counts=counts):
                out.write(chunk)
    except OSError as exc:
        raise StoreError(f"Could not write {path}: {exc.strerror or exc}.") from None
    return ExportResult(path, counts[0], counts[1])


def _fenced(text: str, language: str) -> str:
    # A fence longer than any backtick run inside, so code cannot close it early.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
