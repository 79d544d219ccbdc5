"""The REPL's context commands: ``/context`` (where the next request's tokens go) and
``/compact`` (summarize the older part of the session now).

Registered with the other slash commands by importing this module from
``hermes.cli.slash``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from hermes.cli.render import compaction_line, usage_line
from hermes.cli.slash import command

if TYPE_CHECKING:
    from hermes.cli.repl import Repl


@command("context", "/context", "how the next request's tokens split, and the room left")
def context(repl: Repl, argument: str) -> None:
    if not repl.runtime.config.provider:
        repl.warn("No provider is configured, so there is no context window to show.")
        return
    agent = repl.agent()
    if repl.session_id is not None:
        system = repl.runtime.store.get_session(repl.session_id).system_prompt
    else:
        system = None
    window = agent.context_window(repl.session_id)
    report = window.report(repl.session_id, system or agent._build_system_prompt())
    budget = window.budget
    table = Table(box=None, padding=(0, 2, 0, 0), show_header=False)
    table.add_column()
    table.add_column(justify="right")
    table.add_column(justify="right", style="dim")
    rows = [
        ("system prompt", report.system),
        ("tools", report.tools),
        ("skills index", report.skills_index),
        ("summary", report.summary),
        ("recent history", report.history),
        ("reserved for the answer", report.reserved_for_answer),
        ("room left", report.free),
    ]
    for name, tokens in rows:
        table.add_row(name, f"{tokens:,}", f"{tokens / report.window:.1%}")
    table.add_row(Text("window", style="bold"), Text(f"{report.window:,}", style="bold"), "")
    calibration = (
        f"scaled ×{report.ratio:g} to the provider's last count"
        if report.ratio
        else "not yet calibrated by the provider"
    )
    repl.console.print(
        Text(f"Next request to {window.provider.model}, estimated in tokens ({calibration}):")
    )
    repl.console.print(table)
    repl.note(
        f"Compacts above {budget.trigger:,} tokens (HERMES_COMPACT_THRESHOLD "
        f"{budget.threshold:g} of the window, HERMES_CONTEXT_WINDOW to change the window); "
        f"{report.compactions} compaction(s) so far; /compact forces one."
    )


@command("compact", "/compact", "summarize the older part of this session now")
def compact(repl: Repl, argument: str) -> None:
    if repl.session_id is None or not repl.runtime.store.messages(repl.session_id, limit=1):
        repl.note("Nothing to compact yet: this session has no messages.")
        return
    repl.note("summarizing the older messages…")
    event, usage = repl.agent().context_window(repl.session_id).compact_now(repl.session_id)
    if event is None:
        repl.note("Nothing to compact: the session is already as short as it gets.")
        return
    repl.console.print(Text(compaction_line(event), style="dim cyan"))
    if usage.input_tokens or usage.output_tokens:
        repl.note(usage_line(usage))
