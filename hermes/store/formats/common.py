"""Checks and conversions shared by the export parsers."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

from hermes.messages import Message
from hermes.store.bulk import SessionRecord

# Titles from other tools are display text; a hostile file must not put a
# novel into every sessions list and search result.
MAX_TITLE = 300


class BadConversation(ValueError):
    """A problem inside one conversation; the caller adds which one it is."""


def record(*, title, created, updated, messages, **extra) -> SessionRecord:
    """A SessionRecord with missing times filled in from the messages."""
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


def fill_times(
    timed: list[tuple[Message, datetime | None]], start: datetime | None
) -> list[tuple[Message, datetime]]:
    """Give each message without a time the time of the one before it (``start``,
    or the first known time, for the first), so the conversation keeps its order."""
    known = [when for _, when in timed if when is not None]
    previous = start or (known[0] if known else datetime.now(UTC))
    filled = []
    for message, when in timed:
        previous = when or previous
        filled.append((message, previous))
    return filled


def short_title(value: Any, what: str) -> str | None:
    """A title from another tool: one line, at most MAX_TITLE characters."""
    title = optional_str(value, what)
    if title is None:
        return None
    title = " ".join(title.split())
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1].rstrip() + "…"


def obj(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise BadConversation(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


def optional_str(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise BadConversation(f"{what} must be a string")


def id_text(value: Any) -> str:
    if not isinstance(value, str | int) or not str(value).strip():
        raise BadConversation("the conversation id must be a non-empty string")
    text = str(value).strip()
    if len(text) > 180:
        raise BadConversation("the conversation id is longer than 180 characters")
    return text


def epoch(value: Any, what: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadConversation(f"{what} must be a number of seconds since 1970")
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise BadConversation(f"{what} {value!r} is not a usable time") from None


def iso(value: Any, what: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadConversation(f"{what} must be an ISO-8601 time string")
    try:
        moment = datetime.fromisoformat(value)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except ValueError:
        raise BadConversation(f"{what} {value[:40]!r} is not an ISO-8601 time") from None
    except OverflowError:  # 0001-01-01T00:00:00+05:00 is before year 1 in UTC
        raise BadConversation(f"{what} {value[:40]!r} is out of the range of dates") from None


def fingerprint(item: Any) -> str:
    # No id in the file: a hash of the content still makes re-imports idempotent.
    try:
        canonical = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        raise BadConversation("it is nested too deeply to be a conversation") from None
    return "sha1-" + hashlib.sha1(canonical.encode()).hexdigest()


def fenced(text: str, language: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
