"""What a path in a command points at: the root, home, a system folder, a disk, the workspace,
Hermes' own data folder (HERMES_HOME), another process's environment.

Paths come as the model wrote them (``~/x``, ``$HOME/../..``, ``/usr//./bin``,
``/*``); they are normalised the way the kernel would see them, relative
paths against the directory the command runs in. Nothing here touches the
file system except the block-device ``stat`` and the mount table read.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

# Deleting one of these recursively wrecks the machine or the user's account.
ROOT_FOLDERS = frozenset(
    [
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/usr",
        "/var",
        "/usr/bin",
        "/usr/lib",
        "/usr/local",
        "/usr/sbin",
        "/var/lib",
    ]
)

# Writing here changes how the user's shell, login or machine behaves.
SHELL_STARTUP_FILES = frozenset(
    [
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".inputrc",
        ".xprofile",
        ".xinitrc",
    ]
)
SENSITIVE_HOME_FOLDERS = (".ssh", ".gnupg", ".config/autostart", ".config/fish", ".aws", ".kube")
SENSITIVE_SYSTEM_FOLDERS = ("/etc", "/boot", "/usr", "/bin", "/sbin", "/lib", "/var/spool/cron")

# Harmless special files a command may write to.
HARMLESS_DEVICES = re.compile(r"^/dev/(null|zero|stdout|stderr|stdin|tty|fd/\d+|pts/\d+)$")
SCRATCH_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
BLOCK_DEVICE_NAMES = re.compile(
    r"^/dev/("
    r"[shv]d[a-z]+\d*|xvd[a-z]+\d*|nvme\d+n\d+(p\d+)?|mmcblk\d+(p\d+)?|loop\d+|dm-\d+|md\d+"
    r"|sr\d+|fd\d+|root|mapper/.+|disk/.+|block/.+)$"
)

# What in HERMES_HOME holds secrets: the settings file (API keys), the web's
# secret key, the database (conversations, memory) and its backups.
HERMES_SECRET_ENTRIES = (
    ".env",
    "secret_key",
    "hermes.db",
    "hermes.db-wal",
    "hermes.db-shm",
    "backups",
)
# /proc/PID/environ holds the environment a process started with (Hermes' keys,
# even after child_environment stripped them from bash's); mem is its memory;
# cmdline of another process may carry secrets passed as arguments. Written as
# the model wrote it: /proc/$PPID/environ, /proc/*/environ, /proc/1/mem.
PROCESS_SECRETS = re.compile(
    r"/proc/+[^/\s'\"]+/+(environ|mem)\b|/proc/+(?!self/|thread-self/)[^/\s'\"]+/+cmdline\b"
)

_GLOB_ONLY = re.compile(r"\.?[*?]+")
_VARIABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?")


@dataclass(frozen=True)
class Place:
    """Where one path argument points. ``path`` is None when it is only known at run time."""

    path: str | None
    written: str

    @property
    def known(self) -> bool:
        return self.path is not None


class PathJudge:
    """Normalises paths for one classification: home, workspace and current directory."""

    def __init__(self, workspace: Path, home: Path, hermes_home: Path | None = None):
        self.workspace = posixpath.normpath(str(workspace))
        self.home = posixpath.normpath(str(home))
        self.hermes_home = (
            posixpath.normpath(os.path.realpath(hermes_home)) if hermes_home is not None else None
        )

    def place(self, word: str, cwd: str | None) -> Place:
        """Resolve ``word`` (with ``~`` and ``$HOME`` expanded) against ``cwd``."""
        text = word
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        for home_var in ("${HOME}", "$HOME"):
            if text.startswith(home_var):
                text = self.home + text[len(home_var) :]
        if self.hermes_home is not None:
            for home_var in ("${HERMES_HOME}", "$HERMES_HOME"):
                if text.startswith(home_var):
                    text = self.hermes_home + text[len(home_var) :]
        if "$" in text or "`" in text or text.startswith("~"):
            return Place(None, word)  # another variable, or ~user: unknown until run time
        if not text.startswith("/"):
            if cwd is None:
                return Place(None, word)
            text = cwd + "/" + text
        # Globs at the end (/*, ~/.*) mean "everything in": judge the folder itself.
        while True:
            head, tail = posixpath.split(text.rstrip("/") or "/")
            if tail and _GLOB_ONLY.fullmatch(tail):
                text = head
                continue
            break
        normal = posixpath.normpath(text)
        if normal.startswith("//"):
            normal = "/" + normal.lstrip("/")
        return Place(normal, word)

    # -- categories ----------------------------------------------------------

    def is_catastrophic(self, place: Place) -> bool:
        """The root, a top-level system folder, the home folder or the folder above it."""
        if not place.known:
            return False
        return place.path in ROOT_FOLDERS or place.path in (self.home, posixpath.dirname(self.home))

    def is_sensitive(self, place: Place) -> bool:
        """Shell startup files, ~/.ssh and friends, /etc, crontabs and system folders."""
        if not place.known:
            return False
        path = place.path
        if posixpath.dirname(path) == self.home and posixpath.basename(path) in SHELL_STARTUP_FILES:
            return True
        for folder in SENSITIVE_HOME_FOLDERS:
            if _within(path, posixpath.join(self.home, folder)):
                return True
        return any(_within(path, folder) for folder in SENSITIVE_SYSTEM_FOLDERS) or (
            path.startswith("/etc/cron") or path.startswith("/var/spool/cron")
        )

    def is_hermes_data(self, place: Place) -> bool:
        """In HERMES_HOME (its settings, keys, database, approval rules, skills, memory).

        A workspace inside HERMES_HOME (a server's ``$HERMES_HOME/workspace``) is
        the model's own, as the file tools see it too."""
        return self._hermes_part(place) is not None

    def is_hermes_secret(self, place: Place) -> bool:
        """HERMES_HOME itself (``cat ~/.hermes/*``) or one of its secret files."""
        part = self._hermes_part(place)
        if part is None:
            return False
        if part == "":
            return True
        first = part.split("/", 1)[0]
        return any(fnmatch.fnmatchcase(entry, first) for entry in HERMES_SECRET_ENTRIES)

    def is_above_hermes_home(self, place: Place) -> bool:
        """A folder HERMES_HOME is inside of (a recursive read of it reads the secrets too)."""
        if not place.known or self.hermes_home is None or self._workspace_in_hermes_home():
            return False
        return _within(self.hermes_home, place.path) and place.path != self.hermes_home

    def mentioned_in(self, code: str) -> bool:
        """Inline code (``python -c``) that names HERMES_HOME, however it is spelled."""
        home = self.hermes_home
        if home is None:
            return False
        if "HERMES_HOME" in code:
            return True
        spellings = []
        for base, prefix in ((self.workspace, ""), (self.home, "~/")):
            if base != home and _within(home, base):
                spellings.append(prefix + home[len(base) :].lstrip("/"))
        if any(s in code for s in spellings):
            return True
        at = code.find(home)
        while at != -1:
            # A workspace inside HERMES_HOME is the model's: naming it is fine.
            if not (self._workspace_in_hermes_home() and code.startswith(self.workspace, at)):
                return True
            at = code.find(home, at + 1)
        return False

    def _hermes_part(self, place: Place) -> str | None:
        """``place`` relative to HERMES_HOME ("" for the folder itself), or None if outside."""
        if not place.known or self.hermes_home is None:
            return None
        if self._workspace_in_hermes_home() and _within(place.path, self.workspace):
            return None
        for path in (place.path, _real(place.path)):
            if _within(path, self.hermes_home):
                return path[len(self.hermes_home) :].lstrip("/")
        return None

    def _workspace_in_hermes_home(self) -> bool:
        home = self.hermes_home
        return home is not None and self.workspace != home and _within(self.workspace, home)

    def is_outside_workspace(self, place: Place) -> bool:
        """Not in the workspace, not scratch space, not a harmless device."""
        if not place.known:
            return True
        path = place.path
        if HARMLESS_DEVICES.match(path):
            return False
        if any(_within(path, folder) for folder in SCRATCH_FOLDERS):
            return False
        return not _within(path, self.workspace)

    def is_block_device(self, place: Place) -> bool:
        if not place.known or not place.path.startswith("/dev/"):
            return False
        if BLOCK_DEVICE_NAMES.match(place.path):
            return True
        try:
            return stat.S_ISBLK(os.stat(place.path).st_mode)
        except (OSError, ValueError):
            return False

    def is_mounted_disk(self, place: Place) -> bool:
        """A device (or the disk holding a partition) that appears in the mount table."""
        if not self.is_block_device(place):
            return False
        device = os.path.realpath(place.path)
        for source in mounted_sources():
            if source == device or source == place.path:
                return True
            # /dev/sda is in use when /dev/sda1 is mounted.
            if source.startswith(device) and source[len(device) :].lstrip("p").isdigit():
                return True
        return False


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _real(path: str) -> str:
    """``path`` with symlinks resolved (a link in the workspace may point into HERMES_HOME)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def reads_process_secrets(word: str) -> bool:
    """The word names /proc/PID/environ or mem (any PID), or another process's cmdline."""
    return bool(PROCESS_SECRETS.search(word))


_MOUNTS: tuple[float, tuple[str, ...]] = (0.0, ())
_MOUNTS_TTL = 10.0


def mounted_sources() -> tuple[str, ...]:
    """Devices in /proc/mounts (re-read at most every 10 s); empty where there is none."""
    global _MOUNTS
    stamp, sources = _MOUNTS
    if time.monotonic() - stamp < _MOUNTS_TTL and stamp:
        return sources
    found = []
    try:
        with open("/proc/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                source = line.split(" ", 1)[0]
                if source.startswith("/dev/"):
                    found.append(os.path.realpath(source))
                    found.append(source)
    except OSError:
        pass
    _MOUNTS = (time.monotonic(), tuple(found))
    return _MOUNTS[1]


def has_variable(word: str) -> bool:
    return bool(_VARIABLE.search(word)) or "`" in word
