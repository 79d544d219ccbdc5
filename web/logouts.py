"""Logins ended by POST /logout, remembered on disk so a restart still refuses them.

The login cookie is signed, not stored: without this list a copied cookie
would stay valid after its owner logged out, until its idle timeout. The list
lives in ``HERMES_HOME/logouts.json`` (0600, written atomically), so a
redeploy or a restart of ``hermes web`` does not bring such a cookie back.
It holds sha256 digests of the login ids, never the ids themselves, each
with the wall-clock time of its logout; an entry older than the idle window
is dropped, since the cookie's own idle check refuses it by then.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path

from hermes.atomic import write_text

LOGOUTS_FILE = "logouts.json"
# Clock skew between a logout and the cookie's last-seen stamp; a minute is plenty.
_MARGIN = 60.0

log = logging.getLogger("hermes.web.auth")


class Logouts:
    """Ended login ids, shared by every process on one HERMES_HOME. Thread-safe."""

    def __init__(self, path: Path, lifetime: float) -> None:
        self._path = path
        self._lifetime = lifetime + _MARGIN
        self._lock = threading.Lock()
        self._ended: dict[str, float] = {}  # digest -> time.time() of the logout
        self._stamp: tuple[int, int] | None = None
        with self._lock:
            self._reload()

    def end(self, login_id: object) -> None:
        """Remember ``login_id`` as logged out, on disk before the response goes out."""
        if not isinstance(login_id, str) or not login_id:
            return
        with self._lock:
            self._reload()  # another process on this home may have added some since
            self._ended[_digest(login_id)] = time.time()
            self._prune()
            try:
                write_text(self._path, json.dumps(self._ended, sort_keys=True))
                self._stamp = self._file_stamp()
            except OSError as exc:
                # Still refused by this process; a restart would forget it.
                log.warning("could not save the logout to %s: %s", self._path, exc.strerror)

    def ended(self, login_id: object) -> bool:
        """Whether ``login_id`` was logged out (here, in another process, or before a restart)."""
        if not isinstance(login_id, str) or not login_id:
            return False
        with self._lock:
            if self._file_stamp() != self._stamp:
                self._reload()
            return _digest(login_id) in self._ended

    def _reload(self) -> None:
        """Merge the file into memory (an entry whose save failed stays in memory)."""
        self._stamp = self._file_stamp()
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self._path, exc)
            data = {}
        if isinstance(data, dict):
            for digest, when in data.items():
                if isinstance(digest, str) and isinstance(when, int | float):
                    self._ended[digest] = max(float(when), self._ended.get(digest, 0.0))
        self._prune()

    def _prune(self) -> None:
        oldest = time.time() - self._lifetime
        self._ended = {d: when for d, when in self._ended.items() if when >= oldest}

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self._path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_ino)


def _digest(login_id: str) -> str:
    return hashlib.sha256(login_id.encode("utf-8", "replace")).hexdigest()
