"""Our own JSON export (``hermes export``), read back as it was written.

Unlike the other formats every visible field is restored (tool calls and
results, summaries, models, times), and sessions without messages are kept,
so an export imported into a fresh home gives the same sessions.

Two fields are dropped on purpose: the session's ``system_prompt`` and each
message's ``context`` (the skills block of that turn). Both are replayed to
the model as Hermes' own instructions, yet an export is a file anyone can
write, so keeping them would let a hostile file set the agent's standing
orders. They are Hermes' own derived state, not the conversation: the next
turn builds a fresh system prompt from this home's profile and skills.
"""

from __future__ import annotations

import re
from typing import Any

from hermes.events import ToolCall
from hermes.messages import Message
from hermes.store.bulk import SessionRecord
from hermes.store.formats.common import (
    BadConversation,
    fill_times,
    iso,
    obj,
    optional_str,
    record,
)
from hermes.store.store import ROLES, SOURCES

EXPORT_VERSION = 1
_UID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def parse_hermes(item: Any) -> SessionRecord:
    """One session of our own JSON export (see ``exports.session_to_dict``)."""
    data = obj(item, "session")
    if data.get("hermes_export") != EXPORT_VERSION:
        raise BadConversation(
            f"not a Hermes export session (hermes_export must be {EXPORT_VERSION}); "
            "use `hermes import chatgpt` or `claude` for other files"
        )
    uid = data.get("uid")
    if not isinstance(uid, str) or not _UID.match(uid):
        raise BadConversation("uid must be a string of letters, digits, '-' or '_'")
    source = data.get("source", "import")
    if source not in SOURCES:
        raise BadConversation(f"source must be one of {', '.join(SOURCES)}")
    raw_messages = data.get("messages", [])
    if not isinstance(raw_messages, list):
        raise BadConversation("messages must be a list")
    created = iso(data.get("created_at"), "created_at")
    timed = []
    for position, raw in enumerate(raw_messages):
        where = f"messages[{position}]"
        message = _message(obj(raw, where), where)
        timed.append((message, iso(raw.get("created_at"), f"{where}.created_at")))
    return record(
        title=optional_str(data.get("title"), "title"),
        created=created,
        updated=iso(data.get("updated_at"), "updated_at"),
        # A hand-written file may leave times out: each message then takes the one before.
        messages=fill_times(timed, created),
        external_id=optional_str(data.get("external_id"), "external_id"),
        uid=uid,
        source=source,
        summary=optional_str(data.get("summary"), "summary"),
        model=optional_str(data.get("model"), "model"),
        # system_prompt is not restored: see the module docstring.
    )


def _message(m: dict, where: str) -> Message:
    role = m.get("role")
    if role not in ROLES:
        raise BadConversation(f"{where}.role must be one of {', '.join(ROLES)}")
    calls = m.get("tool_calls") or []
    if not isinstance(calls, list):
        raise BadConversation(f"{where}.tool_calls must be a list")
    tool_calls = []
    for call in calls:
        call = obj(call, f"{where}.tool_calls[]")
        if not isinstance(call.get("id"), str) or not isinstance(call.get("name"), str):
            raise BadConversation(f"{where}.tool_calls[] needs string id and name")
        tool_calls.append(
            ToolCall(
                id=call["id"], name=call["name"], input=obj(call.get("input", {}), "tool input")
            )
        )
    return Message(
        role=role,
        content=optional_str(m.get("content"), f"{where}.content") or "",
        tool_calls=tuple(tool_calls),
        tool_call_id=optional_str(m.get("tool_call_id"), f"{where}.tool_call_id"),
        tool_name=optional_str(m.get("tool_name"), f"{where}.tool_name"),
        is_error=bool(m.get("is_error", False)),
        # context is not restored either (it would reach the model as our own words).
    )
