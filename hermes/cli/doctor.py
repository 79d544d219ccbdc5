"""`hermes doctor`: check the setup and say how to fix what is wrong.

Each check prints ``ok``, ``warn`` or ``fail`` with a one-line detail, and a
failing (or warning) check says what to do. The command exits non-zero when
any check fails. It never prints a secret: the API key is shown masked.
It creates nothing: on a machine where Hermes never ran, a missing
HERMES_HOME is reported as "created on first use" (after checking that it
can be), and the provider check asks the server for its model list (or, if
it has none, for a 1-token answer).
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from hermes.cli.doctor_checks import (
    Check,
    check_config,
    check_database,
    check_home,
    check_profile,
    check_skills,
    mask,
)
from hermes.cli.doctor_provider import check_provider
from hermes.config import Config
from hermes.errors import HermesError

__all__ = ["Check", "doctor", "mask", "run_checks"]


class DoctorFailed(HermesError):
    """At least one check failed (each was already printed with its fix)."""


@click.command()
def doctor() -> None:
    """Check configuration, data folder, database, search index, skills and the provider."""
    from rich.text import Text

    from hermes.cli.console import make_console

    console = make_console()
    failed = 0
    for check in run_checks():
        show(console, check)
        failed += check.status == "fail"
    if failed:
        raise DoctorFailed(f"{failed} check{'s' if failed != 1 else ''} failed (see above).")
    console.print(Text("All checks passed.", style="green"))


STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red"}


def show(console, check: Check) -> None:
    """Print one check as a line, with its fix underneath when it did not pass."""
    from rich.text import Text

    line = Text()
    line.append(f"{check.status:<5}", style=STATUS_STYLE[check.status])
    line.append(f" {check.name:<14} ", style="bold")
    line.append(check.detail)
    console.print(line)
    if check.fix and check.status != "ok":
        console.print(Text(f"{'':20}→ {check.fix}", style="dim"))


def run_checks(environ=None) -> Iterator[Check]:
    """Every check in order; later checks are skipped when the configuration is unusable."""
    try:
        config = Config.from_env(environ)
    except HermesError as exc:
        yield Check("configuration", "fail", exc.message, "Fix the variable named above.")
        return
    yield check_config(config)
    home_ok = check_home(config)
    yield home_ok
    if home_ok.status != "fail":
        # Everything below lives in HERMES_HOME: no point reading it when it is unusable.
        yield from check_database(config)
        yield check_skills(config)
        yield from check_profile(config)
    yield check_provider(config)
