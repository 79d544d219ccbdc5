"""``hermes usage``: tokens and cost per day and model, from the usage ledger (one row per model call).

Days are UTC days. A call to a model with no known price (a local server)
counts its tokens and leaves its cost out: the cost shown is then a floor,
and the output says so rather than pretend it was free.
"""

from __future__ import annotations

import json

import click


@click.command()
@click.option(
    "--days",
    default=30,
    show_default=True,
    type=click.IntRange(1, 3650),
    help="How many days back, today included.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {days, rows, total}.")
def usage(days: int, as_json: bool) -> None:
    """Tokens and cost per day and model over the last N days."""
    from hermes.config import Config
    from hermes.store import Store

    with Store.open(Config.from_env()) as store:
        rows = store.usage_by_day(days=days)
    total = totals(rows)
    if as_json:
        payload = {"days": days, "rows": [r.to_dict() for r in rows], "total": total}
        click.echo(json.dumps(payload, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    if not rows:
        console.print(f"No model usage recorded in the last {days} day(s).")
        return
    table = Table(box=None, padding=(0, 2, 0, 0), header_style="dim")
    for name, justify in (
        ("day", "left"),
        ("model", "left"),
        ("calls", "right"),
        ("input", "right"),
        ("cached", "right"),
        ("output", "right"),
        ("cost", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=name != "model")
    for row in rows:
        table.add_row(
            row.day,
            row.model,
            f"{row.calls:,}",
            f"{row.input_tokens:,}",
            f"{row.cache_read_tokens:,}",
            f"{row.output_tokens:,}",
            cost_text(row.cost_usd, row.unpriced_calls),
        )
    table.add_row(
        "total",
        "",
        f"{total['calls']:,}",
        f"{total['input_tokens']:,}",
        f"{total['cache_read_tokens']:,}",
        f"{total['output_tokens']:,}",
        cost_text(total["cost_usd"], total["unpriced_calls"]),
        style="bold",
    )
    console.print(table)
    if total["unpriced_calls"]:
        console.print(
            f"{total['unpriced_calls']} call(s) went to models with no known price; "
            "their cost is not included.",
            style="dim",
        )


def totals(rows) -> dict:
    """The rows added up; ``cost_usd`` None when no row had a known price."""
    keys = (
        "calls",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "unpriced_calls",
    )
    total = {key: sum(getattr(r, key) for r in rows) for key in keys}
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    total["cost_usd"] = round(sum(costs), 6) if costs else None
    return total


def cost_text(cost: float | None, unpriced: int) -> str:
    if cost is None:
        return "unknown"
    return f"${cost:.4f}" + ("+" if unpriced else "")
