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


def open_store(*, reading: bool = False):
    """The store; for a command that only reads, a home we cannot write is opened read-only."""
    import os

    from hermes.config import Config
    from hermes.store import Store
    from hermes.store.engine import sqlite_path

    config = Config.from_env()
    if reading:
        path = sqlite_path(config.database_url)
        if path.is_file() and not (
            os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)
        ):
            return Store.open_read_only(config)
    return Store.open(config)


class QueryCommand(click.Command):
    """A command whose last argument is free text: the usage line says that ``--`` ends
    the options, and a usage error repeats it (``hermes search -nginx`` reads -n as --limit)."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [*pieces[:-1], "[--]", pieces[-1]] if pieces else pieces

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["hermes.raw_args"] = list(args)
        with self._dash_hint(ctx):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        # Click converts option values (`-nginx` as --limit "ginx") here, not in parse_args.
        with self._dash_hint(ctx):
            return super().invoke(ctx)

    @staticmethod
    @contextmanager
    def _dash_hint(ctx: click.Context):
        try:
            yield
        except click.UsageError as exc:
            args = ctx.meta.get("hermes.raw_args", [])
            if any(arg.startswith("-") for arg in args) and "--" not in args:
                exc.message += (
                    f" To search for text that starts with '-', end the options with --, "
                    f"e.g. `{ctx.command_path} -- -nginx`."
                )
            raise


@click.command(cls=QueryCommand)
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option("--session", "session_id", type=int, help="Only this session.")
@click.option("--role", type=click.Choice(ROLES), help="Only messages of this role.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of hits.")
def search(query: str, limit: int, session_id: int | None, role: str | None, as_json: bool) -> None:
    """Search every past conversation for QUERY (plain words, questions, "phrases")."""
    with open_store(reading=True) as store:
        hits = store.search(query, limit=limit, session_id=session_id, role=role)
    if as_json:
        click.echo(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
        return
    from rich.text import Text

    from hermes.cli.console import make_console

    console = make_console()
    if not hits:
        shown = query if len(query) <= 80 else query[:79] + "…"
        console.print(Text(f"No results for {printable(shown)!r}."))
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

    with open_store() as store, _ProgressBar() as progress:
        result = import_file(store, kind, file, progress=progress)
    click.echo(result.summary())


class _ProgressBar:
    """A rich progress bar on stderr, only when stderr is a terminal."""

    def __enter__(self):
        self.bar = None
        if not sys.stderr.isatty():
            return None
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        from hermes.cli.console import make_console

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            console=make_console(stderr=True),
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

    with open_store(reading=True) as store:
        if output is None:
            for chunk in iter_export(store, fmt, session_id):
                click.echo(chunk, nl=False)
            return
        result = write_export(store, output, fmt, session_id)
    from hermes.text import plural

    click.echo(
        f"wrote {plural(result.sessions, 'session')}, {plural(result.messages, 'message')} "
        f"to {result.path}"
    )


@click.group()
def db() -> None:
    """Database maintenance: schema upgrades, backups and restoring one."""


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


@db.command()
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
def restore(file: Path | None) -> None:
    """Put a backup back as the database (default: the newest file in HERMES_HOME/backups/).

    The backup is checked with PRAGMA integrity_check first; the current
    database (damaged or not) is moved aside as hermes.db.broken-<time>, never
    deleted. Stop other Hermes processes (the web server) before restoring.
    """
    from hermes.config import Config
    from hermes.store.restore import restore_database

    config = Config.from_env()
    result = restore_database(config.database_url, config.backups_dir, file)
    click.echo(f"restored {result.database} from {result.source}")
    if result.moved_aside:
        click.echo(f"the previous database was moved to {result.moved_aside}")


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
