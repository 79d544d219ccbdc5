"""``hermes db reindex``: embed the messages that have no vector yet (resumable).

Stop it at any moment (Ctrl-C, a crash, a reboot): what was embedded stays,
and the next run carries on from there. Search keeps working meanwhile, by
words alone for the messages not yet embedded.
"""

from __future__ import annotations

import sys
import time

import click


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "estimating"
    if seconds < 90:
        return f"{seconds:.0f} s left"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min left"
    return f"{seconds / 3600:.1f} h left"


@click.command()
@click.option("--batch", default=256, show_default=True, type=click.IntRange(1, 4096))
def reindex(batch: int) -> None:
    """Embed every message that has no vector in the configured space (resumable)."""
    from hermes.config import Config
    from hermes.store import Store

    config = Config.from_env()
    with Store.open(config) as store:
        embedder = store.embedder
        if embedder is None:
            raise click.ClickException(
                "the semantic layer is off (HERMES_EMBEDDINGS=off); nothing to embed"
            )
        done_before, total = store.index_status()
        click.echo(
            f"embedding with {embedder.space}: {done_before} of {total} messages have vectors"
        )
        last_print = 0.0
        progress = None
        interactive = sys.stderr.isatty()
        for progress in store.reindex(batch=batch):
            now = time.monotonic()
            if progress.done and (now - last_print > (0.2 if interactive else 5.0)):
                last_print = now
                line = (
                    f"{progress.done}/{progress.total} embedded, "
                    f"{progress.rate:,.0f} messages/s, {_eta(progress.remaining_seconds)}"
                )
                click.echo(f"\r{line}   " if interactive else line, nl=not interactive, err=True)
        if interactive:
            click.echo(err=True)
        done = progress.done if progress else 0
        rate = f" ({progress.rate:,.0f} messages/s)" if progress and progress.done else ""
        click.echo(f"done: {done} messages embedded{rate}")
