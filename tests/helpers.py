"""Helpers for tests that run `hermes` as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def clean_environ(**extra: str) -> dict[str, str]:
    """This environment minus anything that could point Hermes at a real account or
    another home (keys, base URLs, HERMES_*, DATABASE_URL), plus ``extra``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not (
            name.startswith("HERMES_")
            or name.endswith(("_API_KEY", "_BASE_URL"))
            or name in ("DATABASE_URL", "FLASK_SECRET_KEY")
        )
    }
    env.update(extra)
    return env


def repl_environ(
    provider_env: dict[str, str],
    home: Path,
    workspace: Path,
    *,
    columns: int = 120,
    lines: int = 40,
    stream_timeout: int = 10,
) -> dict[str, str]:
    """The environment of a REPL run in a pty against the scripted model (``provider_env``
    is ``fake_llm.env(wire)``)."""
    return clean_environ(
        **provider_env,
        HERMES_HOME=str(home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_MODEL="gpt-4.1",
        HERMES_MAX_RETRIES="0",
        HERMES_STREAM_TIMEOUT=str(stream_timeout),
        TERM="xterm-256color",
        # pexpect is no terminal emulator: it never answers the cursor-position query.
        PROMPT_TOOLKIT_NO_CPR="1",
        COLUMNS=str(columns),
        LINES=str(lines),
    )


def run_hermes(
    args: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess:
    """Run ``python -m hermes ARGS`` to completion, capturing text output."""
    return subprocess.run(
        [sys.executable, "-m", "hermes", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
