"""The ``hermes`` command. Subcommands live in their own modules and load on demand."""

from __future__ import annotations

import importlib
import os
import sys

import click

from hermes.errors import Cancelled, HermesError
from hermes.privacy import hide_process

# name -> "module:attribute". Each module keeps heavy imports (SDKs, SQLAlchemy)
# inside its functions so that `hermes --help` stays fast.
COMMANDS = {
    "chat": "hermes.cli.chat:chat",
    "search": "hermes.cli.memory_cmds:search",
    "import": "hermes.cli.memory_cmds:import_",
    "export": "hermes.cli.memory_cmds:export",
    "db": "hermes.cli.memory_cmds:db",
    "skills": "hermes.cli.skills_cmds:skills",
    "doctor": "hermes.cli.doctor:doctor",
    "approvals": "hermes.cli.approvals_cmds:approvals",
    "sessions": "hermes.cli.sessions_cmds:sessions",
    "web": "hermes.cli.web_cmd:web",
    "usage": "hermes.cli.usage_cmd:usage",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        return getattr(module, attr)


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.version_option(package_name="hermes-agent", prog_name="hermes")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Hermes: a personal AI agent that remembers and learns.

    Run without a command to open the interactive REPL.
    """
    if ctx.invoked_subcommand is None:
        from hermes.cli.repl import run_repl

        run_repl()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one line on stderr for every expected failure."""
    hide_process()  # the model's commands must not read our keys from /proc/<pid>/environ
    try:
        cli.main(args=argv, prog_name="hermes", standalone_mode=False)
    except HermesError as exc:
        kind = "cancelled" if isinstance(exc, Cancelled) else "error"
        click.echo(f"hermes: {kind}: {exc.message}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("hermes: aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:
        # One line, like every other failure; --help has the long story.
        where = exc.ctx.command_path if exc.ctx else "hermes"
        message = " ".join(exc.format_message().split())
        click.echo(f"hermes: error: {message} (see `{where} --help`)", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"hermes: error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("hermes: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # The reader of our output left (`| head -1`): not an error worth a line.
        # Point stdout at /dev/null so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)
