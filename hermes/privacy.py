"""Everything under HERMES_HOME is private to its user: files 0600, folders 0700.

The home holds every conversation, the API keys in ``.env``, the web secret
and the shell history, so nothing in it may be readable by other accounts on
the machine. Files Hermes creates are made private as they are created
(:func:`create_private_file`, :func:`private_folder`); :func:`secure_home`
fixes what Hermes keeps there (a home written by an older Hermes, a ``.env``
made with a plain ``cp``) once per process. Links are never followed, and a
file we cannot change (another owner, a read-only disk) is left as it is:
``hermes doctor`` reports an unwritable home.

The process itself is private too: :func:`hide_process` (called first thing
by every entry point: the ``hermes`` command, ``create_app``, gunicorn's
config) makes it non-dumpable, so the model's commands, which run as the same
OS user, cannot read Hermes' keys from ``/proc/<pid>/environ`` or its memory.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
import threading
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700

_secured: set[Path] = set()
_lock = threading.Lock()


def private_folder(path: Path) -> Path:
    """Create ``path`` (and missing parents inside it) as a 0700 folder; fix it if it exists."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    _fix(path, FOLDER_MODE)
    return path


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist (SQLite then keeps the mode
    for the database and gives the same to its -wal and -shm files)."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    except FileExistsError:
        _fix(path, FILE_MODE)
        return
    os.close(fd)


def secure_tree(root: Path) -> None:
    """Make ``root`` and everything below it private (links are not followed)."""
    if root.is_symlink() or not root.exists():
        return
    if not root.is_dir():
        _fix(root, FILE_MODE)
        return
    _fix(root, FOLDER_MODE)
    for current, dirs, files in os.walk(root, followlinks=False):
        base = Path(current)
        for name in dirs:
            _fix(base / name, FOLDER_MODE)
        for name in files:
            _fix(base / name, FILE_MODE)


# What Hermes keeps in HERMES_HOME. Only these are changed, so a HERMES_HOME
# pointed at a folder that holds other things (even ~) does not have them chmodded.
HOME_ENTRIES = (
    "hermes.db",
    "hermes.db-wal",
    "hermes.db-shm",
    "backups",
    "repl_history",
    "hermes.log",
    ".env",
    "memory",
    "skills",
)


def secure_home(home: Path) -> None:
    """Fix the permissions of an existing HERMES_HOME and what Hermes keeps in it,
    once per process."""
    home = Path(home)
    with _lock:
        if home in _secured:
            return
        _secured.add(home)
    if not home.is_dir() or home.is_symlink():
        return
    _fix(home, FOLDER_MODE)
    for name in HOME_ENTRIES:
        secure_tree(home / name)


def _fix(path: Path, mode: int) -> None:
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return
        if stat.S_ISREG(info.st_mode):
            # A skill's script keeps its owner-execute bit (0700), nothing for others.
            mode |= info.st_mode & stat.S_IXUSR
        elif not stat.S_ISDIR(info.st_mode):
            return
        if stat.S_IMODE(info.st_mode) != mode:
            os.chmod(path, mode)
    except OSError:
        pass  # not ours to change (or gone); doctor reports a home we cannot write


# prctl(2) options (linux/prctl.h).
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4


def hide_process() -> bool:
    """Make this process non-dumpable (Linux); True if it now is, False elsewhere.

    A non-dumpable process's ``/proc/<pid>/environ``, ``mem`` and ``fd`` belong to
    root, and other processes of the same user cannot ptrace it, so a command the
    model runs cannot read the API keys Hermes started with (child_environment
    only strips them from the child's own environment). The process keeps
    reading its own ``/proc/self`` files (mountinfo, stat, fd). Root can still
    read everything: a separate OS user is the real boundary. Never raises: a
    platform without prctl just stays as it was. The flag survives fork (gunicorn's
    worker) and is reset by exec (the model's commands are ordinary processes).
    """
    prctl = _prctl()
    if prctl is None:
        return False
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 and prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0


def is_dumpable() -> bool | None:
    """This process's dumpable flag (None where prctl is not available)."""
    prctl = _prctl()
    return None if prctl is None else prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0


def _prctl():
    return libc_function("prctl")


def libc_function(name: str):
    """The C library's function ``name`` on Linux, from the process's own symbols (no
    library search); None elsewhere or where the libc has no such function (musl has
    no ``mallopt``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):  # no libc symbol table (static builds, odd loaders)
        return None
