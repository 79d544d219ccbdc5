"""Imports: ChatGPT and Claude data exports, and our own JSON export.

Each format is a top-level JSON array of conversations, streamed with
``iter_json_array``. The import makes two passes over the file: the first only
parses and checks every conversation, so a malformed file is refused before
anything is written; the second adds each conversation atomically (a savepoint of its own, committed
in batches of about ``BATCH_MESSAGES`` messages).
Conversations already present (same external id or, for our own exports, the
same session uid) are skipped, which makes importing the same file twice a
no-op.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import queue
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes.errors import ImportFileError
from hermes.events import ToolCall
from hermes.messages import Message
from hermes.store.jsonstream import iter_json_array
from hermes.store.store import ROLES, SOURCES, SessionRecord, Store

FORMATS = ("chatgpt", "claude", "hermes")
EXPORT_VERSION = 1
# Conversations are committed in groups of about this many messages (each one
# still all-or-nothing in its own savepoint): short enough that the web server
# waits only a moment for the write lock, long enough to keep imports fast.
BATCH_MESSAGES = 2000
_UID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# progress(phase, bytes_done, bytes_total); phase is "checking" or "importing".
Progress = Callable[[str, int, int], None]


class _Bad(ValueError):
    """A problem inside one conversation; wrapped with its index by the caller."""


@dataclass(frozen=True)
class ImportResult:
    conversations: int
    messages: int
    skipped: int
    empty: int

    def summary(self) -> str:
        text = (
            f"imported {self.conversations} conversations, {self.messages} messages; "
            f"skipped {self.skipped} already present"
        )
        if self.empty:
            text += f", {self.empty} with no messages"
        return text


def import_file(
    store: Store, kind: str, path: Path, *, progress: Progress | None = None
) -> ImportResult:
    """Import an export file of ``kind`` (chatgpt, claude or hermes) into ``store``."""
    if kind not in FORMATS:
        raise ImportFileError(f"Unknown import format {kind!r}: use one of {', '.join(FORMATS)}.")
    path = Path(path)
    if not path.is_file():
        raise ImportFileError(f"{path} is not a file; give the path of the conversations.json.")
    total = path.stat().st_size

    def reporter(phase: str):
        return (lambda done: progress(phase, done, total)) if progress else None

    for _ in read_records(kind, path, on_progress=reporter("checking")):
        pass
    imported = messages = skipped = empty = 0
    for batch in _batches_in_background(
        read_records(kind, path, on_progress=reporter("importing"))
    ):
        worth = [record for record in batch if record.messages]
        empty += len(batch) - len(worth)
        for record, session_id in zip(worth, store.add_session_records(worth), strict=True):
            if session_id is None:
                skipped += 1
            else:
                imported += 1
                messages += len(record.messages)
    return ImportResult(imported, messages, skipped, empty)


def _batches_in_background(records: Iterator[SessionRecord]) -> Iterator[list[SessionRecord]]:
    """Group records into batches of about BATCH_MESSAGES messages, parsed on a thread.

    Parsing is Python work and inserting is mostly SQLite work (which releases
    the GIL), so reading the next batch while the last one is written makes
    imports markedly faster. Errors from the reader are re-raised here.
    """
    ready: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def produce() -> None:
        try:
            batch: list[SessionRecord] = []
            count = 0
            for record in records:
                if stop.is_set():
                    return
                batch.append(record)
                count += len(record.messages) + 1
                if count >= BATCH_MESSAGES:
                    ready.put(batch)
                    batch, count = [], 0
            ready.put(batch)
            ready.put(None)
        except BaseException as exc:  # handed to the consumer, which re-raises it
            ready.put(exc)

    worker = threading.Thread(target=produce, name="hermes-import-reader", daemon=True)
    worker.start()
    try:
        while True:
            item = ready.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            if item:
                yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.05)
        worker.join()


def read_records(
    kind: str, path: Path, *, on_progress: Callable[[int], None] | None = None
) -> Iterator[SessionRecord]:
    """Parse and check each conversation of the file, as a SessionRecord."""
    parse = PARSERS[kind]
    for index, item in iter_json_array(path, on_progress=on_progress):
        try:
            yield parse(item)
        except _Bad as exc:
            raise ImportFileError(
                f"{path.name}: conversation {index} is not a valid {kind} export: {exc}. "
                "Nothing was imported."
            ) from None


# ---- ChatGPT ----------------------------------------------------------------


def parse_chatgpt(item: Any) -> SessionRecord:
    """One conversation of ChatGPT's conversations.json.

    The messages form a tree under ``mapping`` (edits and regenerations branch
    it); the conversation the user last saw is the path from ``current_node``
    up to the root.
    """
    conv = _object(item, "conversation")
    mapping = _object(conv.get("mapping"), "mapping")
    created = _epoch(conv.get("create_time"), "create_time")
    updated = _epoch(conv.get("update_time"), "update_time")
    chain: list[dict] = []
    node_id = conv.get("current_node") or _last_leaf(mapping)
    seen: set[str] = set()
    while node_id is not None:
        if not isinstance(node_id, str) or node_id in seen:
            raise _Bad(f"node {node_id!r} is invalid or part of a cycle")
        seen.add(node_id)
        node = mapping.get(node_id)
        if node is None:
            raise _Bad(f"node {node_id!r} is referenced but missing from mapping")
        node = _object(node, f"node {node_id}")
        chain.append(node)
        node_id = node.get("parent")
    chain.reverse()

    messages = []
    for node in chain:
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        author = message.get("author") if isinstance(message.get("author"), dict) else {}
        role = author.get("role")
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        # Tool output from ChatGPT has no tool call to pair with, which would
        # break the history if the session is resumed; system nodes are hidden.
        if role not in ("user", "assistant") or metadata.get(
            "is_visually_hidden_from_conversation"
        ):
            continue
        content = _chatgpt_text(message.get("content"))
        if not content.strip():
            continue
        when = _epoch(message.get("create_time"), "message create_time") or created
        messages.append((Message(role=role, content=content), when))

    conversation_id = conv.get("conversation_id") or conv.get("id") or _fingerprint(item)
    return _record(
        title=_optional_str(conv.get("title"), "title"),
        created=created,
        updated=updated,
        messages=messages,
        external_id=f"chatgpt:{_id_text(conversation_id)}",
    )


def _chatgpt_text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        # multimodal_text mixes strings with image/file dicts: keep the text.
        texts = [p for p in parts if isinstance(p, str)]
        texts += [
            p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return "\n".join(t for t in texts if t)
    for key in ("text", "result"):
        if isinstance(content.get(key), str):
            return content[key]
    return ""


def _last_leaf(mapping: dict) -> str | None:
    # No current_node: take the newest leaf, i.e. the latest branch.
    candidates = [
        (_created(node), key)
        for key, node in mapping.items()
        if isinstance(node, dict) and not node.get("children")
    ]
    return max(candidates)[1] if candidates else None


def _created(node: dict) -> float:
    message = node.get("message")
    value = message.get("create_time") if isinstance(message, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


# ---- Claude -----------------------------------------------------------------


def parse_claude(item: Any) -> SessionRecord:
    """One conversation of Claude's conversations.json (``chat_messages``)."""
    conv = _object(item, "conversation")
    created = _iso(conv.get("created_at"), "created_at")
    updated = _iso(conv.get("updated_at"), "updated_at")
    chat = conv.get("chat_messages", [])
    if not isinstance(chat, list):
        raise _Bad("chat_messages must be a list")
    messages = []
    for position, raw in enumerate(chat):
        entry = _object(raw, f"chat_messages[{position}]")
        role = {"human": "user", "assistant": "assistant"}.get(entry.get("sender"))
        if role is None:
            continue
        content = _claude_text(entry)
        if not content.strip():
            continue
        when = _iso(entry.get("created_at"), f"chat_messages[{position}].created_at") or created
        messages.append((Message(role=role, content=content), when))
    conversation_id = conv.get("uuid") or _fingerprint(item)
    return _record(
        title=_optional_str(conv.get("name"), "name"),
        created=created,
        updated=updated,
        messages=messages,
        external_id=f"claude:{_id_text(conversation_id)}",
    )


def _claude_text(entry: dict) -> str:
    blocks = entry.get("content")
    if isinstance(blocks, list):
        texts = [
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if texts:
            return "\n\n".join(texts)
    text = entry.get("text")
    return text if isinstance(text, str) else ""


# ---- Hermes -----------------------------------------------------------------


def parse_hermes(item: Any) -> SessionRecord:
    """One session of our own JSON export (see ``exports.session_to_dict``)."""
    data = _object(item, "session")
    if data.get("hermes_export") != EXPORT_VERSION:
        raise _Bad(
            f"not a Hermes export session (hermes_export must be {EXPORT_VERSION}); "
            "use `hermes import chatgpt` or `claude` for other files"
        )
    uid = data.get("uid")
    if not isinstance(uid, str) or not _UID.match(uid):
        raise _Bad("uid must be a string of letters, digits, '-' or '_'")
    source = data.get("source", "import")
    if source not in SOURCES:
        raise _Bad(f"source must be one of {', '.join(SOURCES)}")
    raw_messages = data.get("messages", [])
    if not isinstance(raw_messages, list):
        raise _Bad("messages must be a list")
    created = _iso(data.get("created_at"), "created_at")
    messages = []
    for position, raw in enumerate(raw_messages):
        where = f"messages[{position}]"
        m = _object(raw, where)
        role = m.get("role")
        if role not in ROLES:
            raise _Bad(f"{where}.role must be one of {', '.join(ROLES)}")
        calls = m.get("tool_calls") or []
        if not isinstance(calls, list):
            raise _Bad(f"{where}.tool_calls must be a list")
        tool_calls = []
        for call in calls:
            call = _object(call, f"{where}.tool_calls[]")
            if not isinstance(call.get("id"), str) or not isinstance(call.get("name"), str):
                raise _Bad(f"{where}.tool_calls[] needs string id and name")
            tool_calls.append(
                ToolCall(
                    id=call["id"],
                    name=call["name"],
                    input=_object(call.get("input", {}), "tool input"),
                )
            )
        message = Message(
            role=role,
            content=_optional_str(m.get("content"), f"{where}.content") or "",
            tool_calls=tuple(tool_calls),
            tool_call_id=_optional_str(m.get("tool_call_id"), f"{where}.tool_call_id"),
            tool_name=_optional_str(m.get("tool_name"), f"{where}.tool_name"),
            is_error=bool(m.get("is_error", False)),
            context=_optional_str(m.get("context"), f"{where}.context"),
        )
        messages.append((message, _iso(m.get("created_at"), f"{where}.created_at") or created))
    record = _record(
        title=_optional_str(data.get("title"), "title"),
        created=created,
        updated=_iso(data.get("updated_at"), "updated_at"),
        messages=messages,
        external_id=_optional_str(data.get("external_id"), "external_id"),
        uid=uid,
        source=source,
        summary=_optional_str(data.get("summary"), "summary"),
        model=_optional_str(data.get("model"), "model"),
        system_prompt=_optional_str(data.get("system_prompt"), "system_prompt"),
    )
    return record


PARSERS = {"chatgpt": parse_chatgpt, "claude": parse_claude, "hermes": parse_hermes}


# ---- checks -----------------------------------------------------------------


def _record(*, title, created, updated, messages, **extra) -> SessionRecord:
    times = [when for _, when in messages]
    created = created or (min(times) if times else datetime.now(UTC))
    updated = updated or (max(times) if times else created)
    return SessionRecord(
        title=(title or "").strip() or None,
        created_at=created,
        updated_at=max(updated, created),
        messages=messages,
        **extra,
    )


def _object(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise _Bad(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


def _optional_str(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _Bad(f"{what} must be a string")


def _id_text(value: Any) -> str:
    if not isinstance(value, str | int) or not str(value).strip():
        raise _Bad("the conversation id must be a non-empty string")
    text = str(value).strip()
    if len(text) > 180:
        raise _Bad("the conversation id is longer than 180 characters")
    return text


def _epoch(value: Any, what: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(f"{what} must be a number of seconds since 1970")
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise _Bad(f"{what} {value!r} is not a usable time") from None


def _iso(value: Any, what: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Bad(f"{what} must be an ISO-8601 time string")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _Bad(f"{what} {value[:40]!r} is not an ISO-8601 time") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _fingerprint(item: Any) -> str:
    # No id in the file: a hash of the content still makes re-imports idempotent.
    canonical = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha1-" + hashlib.sha1(canonical.encode()).hexdigest()
