"""`hermes skills list|show|import|export|versions|diff|restore`: the skill library."""

from __future__ import annotations

from pathlib import Path

import click


def _manager():
    from hermes.config import Config
    from hermes.runtime import Runtime

    return Runtime(Config.from_env()).skills  # use counts come from the database


def _console():
    from hermes.cli.console import make_console

    return make_console()


def skills_table(width: int, found):
    """Skills as a table at most ``width`` wide: name, version, uses in full, description cut."""
    from hermes.cli.console import Column, fitted_table

    columns = (
        Column("name", style="bold cyan"),
        Column("v", justify="right"),
        Column("uses", justify="right"),
        Column("by", style="dim"),
        Column("description", share=1),
    )
    rows = [
        (skill.name, str(skill.version), str(skill.uses), skill.created_by, skill.description)
        for skill in found
    ]
    return fitted_table(width, columns, rows)


@click.group()
def skills() -> None:
    """Browse, import, export and delete skills (HERMES_HOME/skills)."""


@skills.command("list")
@click.argument("query", required=False)
def list_(query: str | None) -> None:
    """List the installed skills, or those matching QUERY."""
    manager = _manager()
    found = manager.search(query, limit=10_000) if query else manager.list()
    console = _console()
    if not found:
        console.print("No skills match." if query else "No skills yet.")
        return
    console.print(skills_table(console.width, found))


@skills.command()
@click.argument("name")
def show(name: str) -> None:
    """Show one skill: its fields, files and instructions."""
    from rich.markdown import Markdown
    from rich.text import Text

    from hermes.text import printable

    skill = _manager().get(name)
    console = _console()
    console.print(
        Text.assemble((skill.name, "bold"), f"  version {skill.version} · used {skill.uses}×")
    )
    console.print(Text(printable(skill.description)))
    if skill.triggers:
        console.print(Text.assemble(("triggers: ", "dim"), printable(", ".join(skill.triggers))))
    details = [f"created by {skill.created_by}"]
    if skill.source_session is not None:
        details.append(f"from session {printable(str(skill.source_session))}")
    if skill.updated_at:
        details.append(f"updated {printable(skill.updated_at)}")
    console.print(Text(f"{' · '.join(details)} · {skill.path}", style="dim"))
    for path in skill.files:
        console.print(Text.assemble(("file: ", "dim"), printable(path)))
    console.rule()
    console.print(Markdown(printable(skill.body) or "_(no instructions)_"))


@skills.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--replace", is_flag=True, help="Overwrite skills that exist (their old text stays in history)."
)
def import_(path: Path, replace: bool) -> None:
    """Import a skill folder, a SKILL.md, a .zip, or a folder of skills.

    A folder of skills imports every skill it can and lists each one it
    skipped with the reason; the exit status is 1 when any was skipped.
    """
    from rich.text import Text

    from hermes.errors import HermesError
    from hermes.text import brief, plural

    report = _manager().import_skills(path, replace=replace)
    if not report.installed and len(report.skipped) == 1:
        what, reason = report.skipped[0]
        raise HermesError(f"{what} was not imported: {reason}")
    console = _console()
    # One line per skill, cut to the terminal (the description is on `skills show`).
    width = console.width if console.is_terminal else 10_000
    for skill in report.installed:
        verb = "replaced" if skill.name in report.replaced else "imported"
        line = brief(f"{verb} {skill.name}: {skill.description}", width)
        console.print(Text(line), no_wrap=True, overflow="crop")
    for what, reason in report.skipped:
        line = brief(f"skipped {what}: {reason}", width)
        console.print(Text(line, style="yellow"), no_wrap=True, overflow="crop")
    summary = f"{plural(len(report.installed), 'skill')} imported"
    if report.skipped:
        raise HermesError(f"{summary}, {len(report.skipped)} skipped (see above).")
    console.print(summary + ".")


@skills.command()
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def delete(name: str, yes: bool) -> None:
    """Delete a skill with all its files and its version history."""
    manager = _manager()
    skill = manager.get(name)
    if not yes and not click.confirm(
        f"Delete skill {skill.name} (v{skill.version}) and its history?", default=False
    ):
        raise click.exceptions.Exit(1)
    manager.delete(name)
    click.echo(f"deleted skill {skill.name}")


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
