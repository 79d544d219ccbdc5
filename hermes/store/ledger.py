"""The store's long-session tables: compactions, the per-turn usage ledger, token calibration.

Functions take an open connection; :class:`hermes.store.Store` wraps each in
its own transaction. Kept apart from ``store.py`` so that file stays about
sessions and messages.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, case, func, insert, select, update

from hermes.events import Usage
from hermes.store.models import compactions_table, sessions_table, usage_table, utcnow
from hermes.store.values import Compaction, UsageDay


def add_usage(connection: Connection, session_id: int, usage: Usage, model: str) -> int:
    """Add model usage to its session's totals and to the ledger; rows updated (0: no session)."""
    s = sessions_table.c
    unpriced = 1 if usage.cost_usd is None and (usage.input_tokens or usage.output_tokens) else 0
    result = connection.execute(
        update(sessions_table)
        .where(s.id == session_id)
        .values(
            input_tokens=s.input_tokens + usage.input_tokens,
            output_tokens=s.output_tokens + usage.output_tokens,
            cache_read_tokens=s.cache_read_tokens + usage.cache_read_tokens,
            cache_write_tokens=s.cache_write_tokens + usage.cache_write_tokens,
            cost_usd=s.cost_usd + (usage.cost_usd or 0.0),
            unpriced_calls=s.unpriced_calls + unpriced,
        )
    )
    if result.rowcount and (usage.input_tokens or usage.output_tokens):
        connection.execute(
            insert(usage_table).values(
                session_id=session_id,
                model=model,
                created_at=utcnow(),
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                cost_usd=usage.cost_usd,
            )
        )
    return result.rowcount


def usage_by_day(connection: Connection, days: int, now: datetime | None = None) -> list[UsageDay]:
    """Spend per UTC day and model over the last ``days`` days (today included), newest first."""
    u = usage_table.c
    since = (now or utcnow()).replace(hour=0, minute=0, second=0, microsecond=0)
    since -= timedelta(days=max(1, days) - 1)
    day = func.substr(u.created_at, 1, 10)
    query = (
        select(
            day.label("day"),
            u.model,
            func.count().label("calls"),
            func.sum(u.input_tokens),
            func.sum(u.output_tokens),
            func.sum(u.cache_read_tokens),
            func.sum(u.cache_write_tokens),
            func.sum(u.cost_usd),  # NULL when every turn of the group is unpriced
            func.sum(case((u.cost_usd.is_(None), 1), else_=0)),
        )
        .where(u.created_at >= since)
        .group_by(day, u.model)
        .order_by(day.desc(), u.model)
    )
    return [
        UsageDay(
            day=row[0],
            model=row[1] or "unknown",
            calls=row[2],
            input_tokens=row[3] or 0,
            output_tokens=row[4] or 0,
            cache_read_tokens=row[5] or 0,
            cache_write_tokens=row[6] or 0,
            cost_usd=None if row[7] is None else round(row[7], 6),
            unpriced_calls=row[8] or 0,
        )
        for row in connection.execute(query)
    ]


def set_token_ratio(connection: Connection, session_id: int, ratio: float) -> None:
    connection.execute(
        update(sessions_table).where(sessions_table.c.id == session_id).values(token_ratio=ratio)
    )


def add_compaction(connection: Connection, session_id: int, **fields) -> Compaction:
    new_id = connection.execute(
        insert(compactions_table)
        .values(session_id=session_id, created_at=utcnow(), **fields)
        .returning(compactions_table.c.id)
    ).scalar_one()
    row = connection.execute(
        select(compactions_table).where(compactions_table.c.id == new_id)
    ).one()
    return compaction(row)


def latest_compaction(connection: Connection, session_id: int) -> Compaction | None:
    c = compactions_table.c
    row = connection.execute(
        select(compactions_table).where(c.session_id == session_id).order_by(c.id.desc()).limit(1)
    ).first()
    return compaction(row) if row is not None else None


def compactions(connection: Connection, session_id: int) -> list[Compaction]:
    c = compactions_table.c
    found = connection.execute(
        select(compactions_table).where(c.session_id == session_id).order_by(c.id)
    ).all()
    return [compaction(row) for row in found]


def compaction(row) -> Compaction:
    return Compaction(
        id=row.id,
        session_id=row.session_id,
        through_message_id=row.through_message_id,
        pruned_through_id=row.pruned_through_id,
        summary=row.summary,
        messages_covered=row.messages_covered,
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        model=row.model,
        created_at=row.created_at,
    )
