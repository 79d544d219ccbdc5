"""``hermes search``, ``hermes import``, ``hermes export`` and ``hermes db``.

Heavy imports (SQLAlchemy, rich) stay inside the functions so ``hermes --help``
stays fast.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from hermes.text import printable

ROLES = ("user", "assistant", "tool", "summary")
# Terminal control characters (ANSI escapes, OSC title changes, bells) from
# stored or imported text must not reach the terminal.


def _open_store():
    from hermes.config import Config
    from hermes.store import Store

    return Store.open(Config.from_env())


@click.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option("--session", "session_id", type=int, help="Only this session.")
@click.option("--role", type=click.Choice(ROLES), help="Only messages of this role.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of hits.")
def search(query: str, limit: int, session_id: int | None, role: str | None, as_json: bool) -> None:
    """Search every past conversation for QUERY (plain words, questions, "phrases")."""
    with _open_store() as store:
        hits = store.search(query, limit=limit, session_id=session_id, role=role)
    if as_json:
        click.echo(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
        return
    from rich.console import Console

    console = Console(highlight=False)
    if not hits:
        shown = query if len(query) <= 80 else query[:79] + "…"
        console.print(f"No results for {printable(shown)!r}.")
        return
    for hit in hits:
        console.print(_hit_header(hit))
        console.print(_marked(hit.snippet), "\n")


def _hit_header(hit):
    from rich.text import Text

    header = Text()
    header.append(printable(hit.session_title or f"Session {hit.session_id}"), style="bold")
    where = f"  session {hit.session_id}"
    if hit.message_id is not None:
        where += f", message {hit.message_id}"
    header.append(where, style="dim")
    header.append(f"  {hit.role}", style="cyan")
    header.append(f"  {hit.created_at:%Y-%m-%d %H:%M}", style="dim")
    return header


def _marked(snippet: str):
    """The snippet with «matched» terms highlighted instead of bracketed."""
    from rich.text import Text

    from hermes.store.search import MARK_END, MARK_START

    text = Text()
    for n, piece in enumerate(printable(snippet).replace(MARK_END, MARK_START).split(MARK_START)):
        text.append(piece, style="bold yellow" if n % 2 else "")
    return text


@click.command("import")
@click.argument("kind", type=click.Choice(["chatgpt", "claude", "hermes"]))
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
def import_(kind: str, file: Path) -> None:
    """Import a ChatGPT or Claude conversations.json, or a Hermes JSON export.

    Importing the same file again adds nothing; a newer export adds only the
    new messages of conversations already imported. The file is checked
    completely before anything is written.
    """
    from hermes.store.importers import import_file

    with _open_store() as store, _ProgressBar() as progress:
        result = import_file(store, kind, file, progress=progress)
    click.echo(result.summary())


class _ProgressBar:
    """A rich progress bar on stderr, only when stderr is a terminal."""

    def __enter__(self):
        self.bar = None
        if not sys.stderr.isatty():
            return None
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        self.tasks: dict[str, int] = {}
        return self.update

    def update(self, phase: str, done: int, total: int) -> None:
        if phase not in self.tasks:
            self.tasks[phase] = self.bar.add_task(phase.capitalize(), total=total)
        self.bar.update(self.tasks[phase], completed=done)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


@click.command()
@click.option("--session", "session_id", type=int, help="Only this session (default: all).")
@click.option(
    "--format", "fmt", type=click.Choice(["json", "markdown"]), default="json", show_default=True
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), help="File to write (default: stdout)."
)
def export(session_id: int | None, fmt: str, output: Path | None) -> None:
    """Export sessions as JSON (re-importable with `hermes import hermes`) or Markdown."""
    from hermes.store.exports import iter_export, write_export

    with _open_store() as store:
        if output is None:
            for chunk in iter_export(store, fmt, session_id):
                click.echo(chunk, nl=False)
            return
        result = write_export(store, output, fmt, session_id)
    click.echo(f"wrote {result.sessions} sessions, {result.messages} messages to {result.path}")


@click.group()
def db() -> None:
    """Database maintenance: schema upgrades and backups."""


@db.command()
def upgrade() -> None:
    """Upgrade the database schema to this version of Hermes (backing it up first)."""
    from hermes.config import Config
    from hermes.store import migrate
    from hermes.store.engine import make_folders

    config = Config.from_env()
    make_folders(config)
    with _engine(config) as engine:
        result = migrate.upgrade(engine, config.backups_dir)
    if result.from_revision == result.to_revision:
        click.echo(f"database already at revision {result.to_revision}")
        return
    click.echo(f"database upgraded from {result.from_revision or 'empty'} to {result.to_revision}")
    if result.backup:
        click.echo(f"backup: {result.backup}")


@db.command()
def backup() -> None:
    """Copy the database into HERMES_HOME/backups/ (safe while Hermes is running)."""
    from hermes.config import Config
    from hermes.store import migrate

    config = Config.from_env()
    with _engine(config) as engine:
        path = migrate.backup_database(engine, config.backups_dir)
    click.echo(str(path))


def _register_recall_commands() -> None:
    from hermes.cli.reindex_cmd import reindex

    db.add_command(reindex)


_register_recall_commands()


@contextmanager
def _engine(config):
    """A bare engine for schema work (no Store, so no automatic upgrade), closed after."""
    from hermes.store.engine import explained, make_engine

    engine = make_engine(config.database_url)
    try:
        with explained(engine):
            yield engine
    finally:
        engine.dispose()
