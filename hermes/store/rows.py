"""Database rows to the store's values, and the sessions list's page cursor."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from hermes.errors import InvalidInput
from hermes.messages import Message
from hermes.store.values import (
    SessionInfo,
    StoredMessage,
    tool_calls_from_json,
    tool_calls_to_json,
)


def message_values(
    session_id: int, position: int, message: Message, created_at: datetime, turn_id: str | None
) -> dict:
    return {
        "session_id": session_id,
        "position": position,
        "role": message.role,
        "content": message.content or "",
        "tool_calls": tool_calls_to_json(message.tool_calls),
        "tool_call_id": message.tool_call_id,
        "tool_name": message.tool_name,
        "is_error": bool(message.is_error),
        "context": message.context,
        "turn_id": turn_id,
        "created_at": created_at,
    }


def session_info(row) -> SessionInfo:
    return SessionInfo(
        id=row.id,
        title=row.title,
        source=row.source,
        created_at=row.created_at,
        updated_at=row.updated_at,
        message_count=row.message_count,
        summary=row.summary,
        model=row.model,
        system_prompt=row.system_prompt,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        cost_usd=row.cost_usd,
        uid=row.uid,
        external_id=row.external_id,
        cache_read_tokens=row.cache_read_tokens,
        cache_write_tokens=row.cache_write_tokens,
        unpriced_calls=row.unpriced_calls,
        token_ratio=row.token_ratio,
    )


def stored_message(row) -> StoredMessage:
    message = Message(
        role=row.role,
        content=row.content,
        tool_calls=tool_calls_from_json(row.tool_calls),
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        is_error=bool(row.is_error),
        context=row.context,
    )
    return StoredMessage(row.id, row.session_id, row.created_at, message, row.turn_id)


def encode_cursor(session: SessionInfo) -> str:
    raw = f"{session.updated_at.isoformat()}|{session.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        stamp, _, session_id = base64.urlsafe_b64decode(padded.encode()).decode().partition("|")
        return datetime.fromisoformat(stamp), int(session_id)
    except (ValueError, UnicodeError, binascii.Error):
        raise InvalidInput(
            "The sessions cursor is not valid; use the `next` value of the previous page."
        ) from None
