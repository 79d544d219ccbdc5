"""The write lock of a skills folder, held across threads *and* processes.

The CLI, the REPL and the web server can all write the same skills folder
(``record_use`` bumps a counter on every ``use_skill``); a read-modify-write
that interleaves with another loses an update. Inside one process a
re-entrant thread lock serialises writers; across processes an ``fcntl``
lock on ``.skills.lock`` beside the skills folder does (beside, so the folder
itself holds nothing but skills). Without ``fcntl`` (Windows) only the thread
lock applies.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from hermes.errors import StoreError

try:
    import fcntl
except ImportError:  # Windows: no advisory file locks through this module
    fcntl = None  # type: ignore[assignment]


_LOCKS: dict[Path, FolderLock] = {}
_LOCKS_GUARD = threading.Lock()


def lock_for(root: Path) -> FolderLock:
    """The one lock of the skills folder ``root`` in this process."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(root, FolderLock(root))


class FolderLock:
    """A re-entrant lock for writing one skills folder.

    Disk failures inside the locked block (a read-only or full disk) leave it
    as a StoreError naming the folder, never as a bare OSError.
    """

    def __init__(self, root: Path):
        self.root = root
        self._thread = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def __enter__(self) -> FolderLock:
        self._thread.acquire()
        try:
            if self._depth == 0:
                self._fd = self._lock_file()
            self._depth += 1
        except BaseException:
            self._thread.release()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._fd is not None:
                fd, self._fd = self._fd, None
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
        finally:
            self._thread.release()
        if isinstance(exc, OSError):
            raise _disk_error(self.root, exc) from exc

    def _lock_file(self) -> int | None:
        if fcntl is None:
            return None
        try:
            self.root.parent.mkdir(parents=True, exist_ok=True)
            lock_path = self.root.parent / f".{self.root.name}.lock"
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise _disk_error(self.root, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for the other process's write
        except BaseException:
            os.close(fd)
            raise
        return fd


def _disk_error(root: Path, exc: OSError) -> StoreError:
    return StoreError(
        f"Could not write the skills folder {root}: {exc.strerror or exc}. Check that "
        "HERMES_HOME is writable and the disk has space."
    )
