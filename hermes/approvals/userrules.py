"""The user's own additions to the rules: ``$HERMES_HOME/approvals.rules``.

One rule a line, ``allow GLOB`` or ``deny GLOB``; ``#`` starts a comment.
A glob is matched (``fnmatch``, case-sensitive) against each simple command
of a command line, written with single spaces (``git push --force origin
main``), and deny globs also against the whole line::

    # my feature branches are mine to rewrite
    allow git push --force origin feature/*
    # never, whatever HERMES_APPROVALS says
    deny *terraform destroy*

``deny`` makes a match forbidden. ``allow`` lets a dangerous match run
without asking; it never unlocks a forbidden command (``rm -rf /`` stays
refused). Bad lines are reported by ``hermes approvals list`` and ignored.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "approvals.rules"


@dataclass(frozen=True)
class UserRules:
    allow: tuple[re.Pattern, ...] = ()
    deny: tuple[re.Pattern, ...] = ()
    problems: tuple[str, ...] = ()

    def allows(self, command: str) -> bool:
        text = _normal(command)
        return any(p.fullmatch(text) for p in self.allow)

    def denies(self, command: str) -> bool:
        text = _normal(command)
        return any(p.fullmatch(text) for p in self.deny)


def parse_rules(text: str) -> UserRules:
    allow, deny, problems = [], [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        verb, _, glob = line.partition(" ")
        glob = _normal(glob)
        if verb not in ("allow", "deny") or not glob:
            problems.append(f"line {number}: {raw.strip()!r} is not 'allow GLOB' or 'deny GLOB'")
            continue
        pattern = re.compile(fnmatch.translate(glob), re.DOTALL)
        (allow if verb == "allow" else deny).append(pattern)
    return UserRules(tuple(allow), tuple(deny), tuple(problems))


_CACHE: dict[Path, tuple[float, int, UserRules]] = {}


def load_rules(home: Path) -> UserRules:
    """The rules file of this HERMES_HOME, re-read when it changes; empty when there is none."""
    path = home / FILE_NAME
    try:
        info = path.stat()
    except OSError:
        return UserRules()
    cached = _CACHE.get(path)
    if cached and cached[0] == info.st_mtime and cached[1] == info.st_size:
        return cached[2]
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return UserRules(problems=(f"{path} could not be read: {exc.strerror}",))
    rules = parse_rules(text)
    _CACHE[path] = (info.st_mtime, info.st_size, rules)
    return rules


def _normal(command: str) -> str:
    return " ".join(command.split())
