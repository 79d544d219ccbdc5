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
