"""Claude's ``conversations.json``: a flat ``chat_messages`` list per conversation.

A message's words are its ``text`` blocks (tool use, tool results and
thinking are left out). Files the user attached are kept: the text Claude
extracted from them (``attachments[].extracted_content``) as a fenced block
under the file's name, and other uploads (``files``) as a ``[File: name]``
line, so they stay searchable and the conversation still reads right.
"""

from __future__ import annotations

from typing import Any

from hermes.messages import Message
from hermes.store.bulk import SessionRecord
from hermes.store.formats.common import (
    BadConversation,
    fenced,
    fill_times,
    fingerprint,
    id_text,
    iso,
    obj,
    record,
    short_title,
)

ROLES = {"human": "user", "assistant": "assistant"}


def parse_claude(item: Any) -> SessionRecord:
    """One conversation of Claude's conversations.json (``chat_messages``)."""
    conv = obj(item, "conversation")
    created = iso(conv.get("created_at"), "created_at")
    updated = iso(conv.get("updated_at"), "updated_at")
    chat = conv.get("chat_messages", [])
    if not isinstance(chat, list):
        raise BadConversation("chat_messages must be a list")
    timed = []
    for position, raw in enumerate(chat):
        entry = obj(raw, f"chat_messages[{position}]")
        role = ROLES.get(entry.get("sender"))
        if role is None:
            continue
        content = "\n\n".join(part for part in (_text(entry), *_attached(entry)) if part)
        if not content.strip():
            continue
        when = iso(entry.get("created_at"), f"chat_messages[{position}].created_at")
        timed.append((Message(role=role, content=content), when))
    conversation_id = conv.get("uuid") or fingerprint(item)
    return record(
        title=short_title(conv.get("name"), "name"),
        created=created,
        updated=updated,
        messages=fill_times(timed, created),
        external_id=f"claude:{id_text(conversation_id)}",
    )


def _text(entry: dict) -> str:
    blocks = entry.get("content")
    if isinstance(blocks, list):
        texts = [
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if any(t.strip() for t in texts):
            return "\n\n".join(t for t in texts if t.strip())
    text = entry.get("text")
    return text if isinstance(text, str) else ""


def _attached(entry: dict) -> list[str]:
    parts = []
    for key in ("attachments", "files"):
        items = entry.get(key)
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            name = item.get("file_name")
            name = " ".join(name.split()) if isinstance(name, str) and name.strip() else "file"
            extracted = item.get("extracted_content")
            if isinstance(extracted, str) and extracted.strip():
                parts.append(f"[Attachment: {name}]\n{fenced(extracted.strip())}")
            else:
                parts.append(f"[File: {name}]")
    return parts
