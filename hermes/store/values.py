"""The values the store hands out: plain frozen dataclasses, no rows."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hermes.events import ToolCall
from hermes.messages import Message


def iso(moment: datetime | None, timespec: str = "milliseconds") -> str | None:
    """ISO-8601 in UTC with a trailing Z, the one timestamp format of the API."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def aware_utc(value: datetime | str) -> datetime:
    """A stored time (naive UTC, as SQLite gives it back) as an aware UTC datetime."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def db_time(moment: datetime) -> str:
    """The text SQLAlchemy's SQLite DateTime stores (naive UTC), for comparing and bulk rows."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


@dataclass(frozen=True)
class SessionInfo:
    id: int
    title: str | None
    source: str
    created_at: datetime
    updated_at: datetime
    message_count: int
    summary: str | None
    model: str | None
    system_prompt: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    uid: str = ""
    external_id: str | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    unpriced_calls: int = 0
    token_ratio: float | None = None

    @property
    def usage(self) -> dict[str, Any]:
        """The session's stored totals. ``cost_usd`` is None when no turn had a known
        price (a local model), never a made-up zero."""
        spent = self.input_tokens + self.output_tokens
        unknown = self.unpriced_calls > 0 and not self.cost_usd
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": None if unknown and spent else round(self.cost_usd, 6),
        }

    def to_dict(self) -> dict[str, Any]:
        """The API shape of a session (``/api/sessions``)."""
        return {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "message_count": self.message_count,
            "summary": self.summary,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "usage": self.usage,
        }


@dataclass(frozen=True)
class Compaction:
    """A stored compaction (see ``models.CompactionRow``)."""

    id: int
    session_id: int
    through_message_id: int
    pruned_through_id: int | None
    summary: str | None
    messages_covered: int
    tokens_before: int
    tokens_after: int
    model: str | None
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        """The API shape (``compactions`` of ``/api/sessions/<id>``); the summary stays private."""
        return {
            "id": self.id,
            "through_message_id": self.through_message_id,
            "messages_covered": self.messages_covered,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "created_at": iso(self.created_at),
        }


@dataclass(frozen=True)
class UsageDay:
    """What one model spent on one (UTC) day."""

    day: str  # YYYY-MM-DD
    model: str
    calls: int  # model calls (turns, their curator and compaction calls)
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None  # None when no turn had a known price
    unpriced_calls: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class StoredMessage:
    id: int
    session_id: int
    created_at: datetime
    message: Message
    turn_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The API shape of a message (``/api/sessions/<id>``); ``context`` stays private."""
        m = self.message
        return {
            "id": self.id,
            "role": m.role,
            "content": m.content,
            "tool_calls": tool_calls_to_list(m.tool_calls),
            "tool_call_id": m.tool_call_id,
            "tool_name": m.tool_name,
            "is_error": m.is_error,
            "created_at": iso(self.created_at),
        }


@dataclass(frozen=True)
class SearchHit:
    """One search result. ``role`` is ``"summary"`` (and ``message_id`` None)
    when the session's title or summary matched rather than a message."""

    session_id: int
    session_title: str | None
    message_id: int | None
    role: str
    snippet: str
    created_at: datetime
    score: float

    def to_dict(self) -> dict[str, Any]:
        """The API shape of a hit (``/api/memory/search``)."""
        return {
            "session_id": self.session_id,
            "session_title": self.session_title,
            "message_id": self.message_id,
            "role": self.role,
            "snippet": self.snippet,
            "created_at": iso(self.created_at),
            "score": self.score,
        }


def tool_calls_to_list(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    return [{"id": c.id, "name": c.name, "input": c.input} for c in calls]


def tool_calls_to_json(calls: tuple[ToolCall, ...]) -> str | None:
    if not calls:
        return None
    return json.dumps(tool_calls_to_list(calls), ensure_ascii=False, separators=(",", ":"))


def tool_calls_from_json(raw: str | None) -> tuple[ToolCall, ...]:
    if not raw:
        return ()
    return tuple(
        ToolCall(id=str(c["id"]), name=str(c["name"]), input=c.get("input") or {})
        for c in json.loads(raw)
    )
