"""ChatGPT's ``conversations.json``: a message tree per conversation.

Edits and regenerations branch the tree under ``mapping``; the conversation
the user last saw is the path from ``current_node`` up to the root. Only what
the user and the assistant said is kept: system and hidden nodes, tool output
(code results, browsing, file search; it has no tool call to pair with, which
would break a resumed session) and reasoning are left out. Code the assistant
ran is kept as a fenced block; images keep the text around them.
"""

from __future__ import annotations

from typing import Any

from hermes.messages import Message
from hermes.store.bulk import SessionRecord
from hermes.store.formats.common import (
    BadConversation,
    epoch,
    fenced,
    fill_times,
    fingerprint,
    id_text,
    obj,
    record,
    short_title,
)


def parse_chatgpt(item: Any) -> SessionRecord:
    """One conversation of ChatGPT's conversations.json."""
    conv = obj(item, "conversation")
    mapping = obj(conv.get("mapping"), "mapping")
    created = epoch(conv.get("create_time"), "create_time")
    updated = epoch(conv.get("update_time"), "update_time")
    timed = []
    for node in _current_branch(conv, mapping):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        author = message.get("author") if isinstance(message.get("author"), dict) else {}
        role = author.get("role")
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        if role not in ("user", "assistant") or metadata.get(
            "is_visually_hidden_from_conversation"
        ):
            continue
        content = _text(message.get("content"))
        if not content.strip():
            continue
        when = epoch(message.get("create_time"), "message create_time")
        timed.append((Message(role=role, content=content), when))
    conversation_id = conv.get("conversation_id") or conv.get("id") or fingerprint(item)
    return record(
        title=short_title(conv.get("title"), "title"),
        created=created,
        updated=updated,
        messages=fill_times(timed, created),
        external_id=f"chatgpt:{id_text(conversation_id)}",
    )


def _current_branch(conv: dict, mapping: dict) -> list[dict]:
    chain: list[dict] = []
    node_id = conv.get("current_node") or _last_leaf(mapping)
    seen: set[str] = set()
    while node_id is not None:
        if not isinstance(node_id, str) or node_id in seen:
            raise BadConversation(f"node {node_id!r} is invalid or part of a cycle")
        seen.add(node_id)
        node = mapping.get(node_id)
        if node is None:
            raise BadConversation(f"node {node_id!r} is referenced but missing from mapping")
        node = obj(node, f"node {node_id}")
        chain.append(node)
        node_id = node.get("parent")
    chain.reverse()
    return chain


def _text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    if content.get("content_type") == "code" and isinstance(content.get("text"), str):
        language = content.get("language")
        language = language if isinstance(language, str) and language.isalnum() else ""
        return fenced(content["text"], "" if language == "unknown" else language)
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
