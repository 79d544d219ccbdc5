"""Where Hermes' own log lines go: HERMES_HOME/hermes.log, never the terminal.

Commands promise one line on stderr when they fail, and the REPL draws a live
region a stray warning would tear; so warnings (a curator that could not
reach the model, a skill folder skipped) are written to a file instead.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from hermes.privacy import create_private_file, private_folder

LOG_FILE = "hermes.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The handler is process-wide: two threads (two runtimes) must not both add one.
_lock = threading.Lock()


class _FileHandler(logging.FileHandler):
    def handleError(self, record: logging.LogRecord) -> None:
        pass  # a full disk must not print a traceback into the terminal


def log_to_file(home: Path) -> Path:
    """Send the ``hermes`` loggers to ``home/hermes.log``.

    Called again with another home (tests, or a second runtime in one
    process), the file follows the newest home. Records still propagate, so a
    web server's or a test's own handlers see them; nothing here writes to
    the terminal. Safe to call from any thread, any number of times: there is
    never more than one Hermes file handler.
    """
    with _lock:
        return _log_to(home / LOG_FILE)


def _log_to(path: Path) -> Path:
    logger = logging.getLogger("hermes")
    for old in [h for h in logger.handlers if getattr(h, "hermes_log", None) is not None]:
        if old.hermes_log == path:
            return path
        logger.removeHandler(old)
        old.close()
    try:
        private_folder(path.parent)
        create_private_file(path)  # the log names sessions and skills: not for other users
        handler: logging.Handler = _FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()  # an unwritable home is reported elsewhere
    handler.hermes_log = path
    handler.setFormatter(logging.Formatter(_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return path
