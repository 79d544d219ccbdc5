"""`hermes skills list|show|import|export|versions|diff|restore`: the skill library."""

from __future__ import annotations

from pathlib import Path

import click


def _manager():
    from hermes.config import Config
    from hermes.runtime import Runtime

    return Runtime(Config.from_env()).skills  # use counts come from the database


def _console():
    from rich.console import Console

    return Console()


@click.group()
def skills() -> None:
    """Browse, import and export skills (HERMES_HOME/skills)."""


@skills.command("list")
@click.argument("query", required=False)
def list_(query: str | None) -> None:
    """List the installed skills, or those matching QUERY."""
    from rich.table import Table

    manager = _manager()
    found = manager.search(query, limit=10_000) if query else manager.list()
    console = _console()
    if not found:
        console.print("No skills match." if query else "No skills yet.")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("name", "v", "uses", "by", "description"):
        table.add_column(column, no_wrap=column != "description")
    for skill in found:
        table.add_row(
            f"[bold]{skill.name}[/bold]",
            str(skill.version),
            str(skill.uses),
            skill.created_by,
            skill.description,
        )
    console.print(table)


@skills.command()
@click.argument("name")
def show(name: str) -> None:
    """Show one skill: its fields, files and instructions."""
    from rich.markdown import Markdown
    from rich.markup import escape

    skill = _manager().get(name)
    console = _console()
    console.print(f"[bold]{skill.name}[/bold]  version {skill.version} · used {skill.uses}x")
    console.print(escape(skill.description))
    if skill.triggers:
        console.print(f"[dim]triggers:[/dim] {escape(', '.join(skill.triggers))}")
    details = [f"created by {skill.created_by}"]
    if skill.source_session is not None:
        details.append(f"from session {skill.source_session}")
    if skill.updated_at:
        details.append(f"updated {skill.updated_at}")
    console.print(f"[dim]{' · '.join(details)} · {skill.path}[/dim]")
    for path in skill.files:
        console.print(f"[dim]file:[/dim] {escape(path)}")
    console.rule()
    console.print(Markdown(skill.body or "_(no instructions)_"))


@skills.command("import")
@click.argument("path", type=click.Path(path_type=Path))
def import_(path: Path) -> None:
    """Import a skill folder, a SKILL.md, a .zip, or a folder of skills."""
    installed = _manager().import_path(path)
    console = _console()
    for skill in installed:
        console.print(f"imported [bold]{skill.name}[/bold]: {skill.description}")
    console.print(f"{len(installed)} skill(s) imported.")


@skills.command()
@click.argument("name")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Zip file (or folder) to write; default NAME.zip here.",
)
def export(name: str, output: Path | None) -> None:
    """Export a skill as a zip (without its version history)."""
    written = _manager().export_zip(name, output or Path.cwd() / f"{name}.zip")
    click.echo(str(written))


@skills.command()
@click.argument("name")
def versions(name: str) -> None:
    """List the versions of a skill."""
    for version in _manager().versions(name):
        mark = " (current)" if version.current else ""
        click.echo(f"v{version.version}  {version.updated_at or ''}{mark}")


@skills.command()
@click.argument("name")
@click.argument("a", type=int)
@click.argument("b", type=int)
def diff(name: str, a: int, b: int) -> None:
    """Show what changed in a skill between versions A and B."""
    click.echo(_manager().diff(name, a, b) or "(no differences)\n", nl=False)


@skills.command()
@click.argument("name")
@click.argument("version", type=int)
def restore(name: str, version: int) -> None:
    """Bring back an earlier VERSION of a skill (as a new version)."""
    skill = _manager().restore(name, version)
    click.echo(f"{skill.name} restored from v{version} as v{skill.version}")
