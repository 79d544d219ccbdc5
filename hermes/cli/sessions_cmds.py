"""``hermes sessions``: the recent sessions, as a table that fits the terminal or as JSON.

The same table serves the REPL's ``/sessions``: ids, message counts and dates
always show in full (``/resume ID`` needs the id), titles and summaries are
cut to the room left.
"""

from __future__ import annotations

import json
from datetime import datetime

import click


def sessions_table(width: int, sessions, current: int | None = None):
    """The sessions as a table at most ``width`` columns wide; ``current`` is starred."""
    from hermes.cli.console import Column, fitted_table

    columns = (
        Column("id", justify="right", style="bold cyan"),
        Column("title", share=2),
        Column("msgs", justify="right"),
        Column("updated", style="dim"),
        Column("cost", justify="right", style="dim"),
        Column("summary", share=3, style="dim"),
    )
    rows = [
        (
            f"{'*' if info.id == current else ''}{info.id}",
            info.title or "untitled",
            str(info.message_count),
            local_date(info.updated_at),
            session_cost(info.usage),
            info.summary or "",
        )
        for info in sessions
    ]
    return fitted_table(width, columns, rows)


def session_cost(usage: dict) -> str:
    """A session's spend for a table cell: dollars, "?" when the price is unknown."""
    if not (usage["input_tokens"] or usage["output_tokens"]):
        return ""
    return "?" if usage["cost_usd"] is None else f"${usage['cost_usd']:.4f}"


def local_date(moment: datetime | None) -> str:
    """A stored time as the user's local ``YYYY-MM-DD HH:MM``."""
    if moment is None:
        return ""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


@click.command()
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1, 200))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array like /api/sessions.")
def sessions(limit: int, as_json: bool) -> None:
    """List the most recently updated sessions (continue one with `hermes chat --session ID`)."""
    from hermes.cli.console import make_console
    from hermes.cli.memory_cmds import open_store

    with open_store(reading=True) as store:
        found, _ = store.list_sessions(limit=limit)
    if as_json:
        keys = (
            "id",
            "title",
            "source",
            "created_at",
            "updated_at",
            "message_count",
            "summary",
            "usage",  # stored totals: tokens and cost_usd (null when the price is unknown)
        )
        items = [{key: info.to_dict()[key] for key in keys} for info in found]
        click.echo(json.dumps(items, ensure_ascii=False, indent=2))
        return
    console = make_console()
    if not found:
        console.print("No sessions yet.")
        return
    console.print(sessions_table(console.width, found))
