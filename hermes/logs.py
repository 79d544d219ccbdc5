"""Where Hermes' own log lines go: HERMES_HOME/hermes.log, never the terminal.

Commands promise one line on stderr when they fail, and the REPL draws a live
region a stray warning would tear; so warnings (a curator that could not
reach the model, a skill folder skipped) are written to a file instead.
"""

from __future__ import annotations

import logging
from pathlib import Path

LOG_FILE = "hermes.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_to_file(home: Path) -> Path:
    """Send the ``hermes`` loggers to ``home/hermes.log`` (once per process)."""
    path = home / LOG_FILE
    logger = logging.getLogger("hermes")
    if any(getattr(h, "hermes_log", False) for h in logger.handlers):
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()  # an unwritable home is reported elsewhere
    handler.hermes_log = True
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return path
