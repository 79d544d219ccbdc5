"""Keep a session's history valid for the model APIs, whatever interrupted it.

Anthropic and OpenAI both refuse (400) a history where a tool call has no
result, or a result answers no call. A turn that died mid-tool (a killed
process, a closed generator, a bug) leaves exactly that; so before a history
is replayed, :func:`repair_session` gives every unanswered call the result
``TOOL_INTERRUPTED`` (stored right after the call, so the repair happens
once), hides results that answer nothing, and closes answers that were still
streaming when their turn died with the interrupted mark.
"""

from __future__ import annotations

import json

from sqlalchemy import Connection, insert, select, update

from hermes.messages import TOOL_INTERRUPTED, Message, mark_interrupted
from hermes.store import rows
from hermes.store.models import messages_table, sessions_table, utcnow


def repair_session(connection: Connection, session_id: int, *, running_turn: str | None) -> int:
    """Repair one session in the caller's write transaction; returns how many rows changed.

    ``running_turn`` is the turn that owns the session now: its own partial
    answer is still being written and is left alone.
    """
    m = messages_table.c
    found = connection.execute(
        select(
            m.id, m.role, m.content, m.tool_calls, m.tool_call_id, m.turn_id, m.partial, m.hidden
        )
        .where(m.session_id == session_id)
        .order_by(m.position)
    ).all()
    changed = 0
    for row in found:
        if row.partial and row.turn_id != running_turn:
            connection.execute(
                update(messages_table)
                .where(m.id == row.id)
                .values(content=mark_interrupted(row.content), partial=False)
            )
            changed += 1

    order: list = []  # row ids, and Messages to insert at their place
    missing_at_end = True
    pending: list[tuple[str, str]] = []  # calls of the last assistant message without a result
    pending_turn: str | None = None

    def flush() -> None:
        nonlocal pending
        for call_id, name in pending:
            order.append((pending_turn, _interrupted_result(call_id, name)))
        pending = []

    for row in found:
        if row.hidden:
            order.append(row.id)
            continue
        if row.role == "tool":
            ids = [call_id for call_id, _ in pending]
            if row.tool_call_id in ids:
                pending.pop(ids.index(row.tool_call_id))
            else:
                # A result that answers no call of the message before it.
                connection.execute(update(messages_table).where(m.id == row.id).values(hidden=True))
                changed += 1
            order.append(row.id)
            continue
        if pending:
            missing_at_end = False
            flush()
        order.append(row.id)
        if row.role == "assistant" and row.tool_calls:
            pending = [(str(c["id"]), str(c["name"])) for c in json.loads(row.tool_calls)]
            pending_turn = row.turn_id
    flush()

    inserts = [item for item in order if not isinstance(item, int)]
    if not inserts:
        return changed
    now = utcnow()
    if not missing_at_end:
        # Make room in the middle: move every row out of the way (negative
        # positions stay unique), then give each its new place.
        connection.execute(
            update(messages_table)
            .where(m.session_id == session_id)
            .values(position=-1 - m.position)
        )
    for position, item in enumerate(order):
        if isinstance(item, int):
            if not missing_at_end:
                connection.execute(
                    update(messages_table).where(m.id == item).values(position=position)
                )
            continue
        turn_id, message = item
        connection.execute(
            insert(messages_table).values(
                rows.message_values(session_id, position, message, now, turn_id)
            )
        )
    connection.execute(
        update(sessions_table)
        .where(sessions_table.c.id == session_id)
        .values(message_count=len(order))
    )
    return changed + len(inserts)


def _interrupted_result(call_id: str, name: str) -> Message:
    return Message(
        role="tool",
        content=TOOL_INTERRUPTED,
        tool_call_id=call_id,
        tool_name=name,
        is_error=True,
    )
