"""Curated profile memory: ``memory/USER.md`` and ``memory/MEMORY.md``.

USER.md says who the user is and what they prefer; MEMORY.md holds the
agent's own notes (facts about the setup, lessons learned). Both are short,
plain text the user can edit by hand, and both go into the system prompt as
a snapshot taken when a session starts, so the prompt prefix never changes
mid-session (provider prompt caches keep hitting).

File format: entries separated by a line holding only ``§``. A hand-written
file without that separator is read as one entry per paragraph (blank-line
separated), and a paragraph that is a bullet list as one entry per bullet, so
notes written by hand still work; the next change rewrites them with ``§``.

Each file has a size limit. When an addition would not fit, the answer tells
the model to consolidate (replace or remove entries) first, instead of
letting it retry the same addition forever.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Literal

from hermes.atomic import write_text
from hermes.errors import InvalidInput
from hermes.guard import scan

Target = Literal["user", "memory"]
FILES: dict[str, str] = {"user": "USER.md", "memory": "MEMORY.md"}
SEPARATOR = "§"
_SEPARATOR_LINE = re.compile(r"^[ \t]*§[ \t]*$", re.MULTILINE)


class ProfileMemory:
    """Read and edit the two profile files, within their size limits."""

    def __init__(self, memory_dir: Path, *, user_limit: int = 4000, agent_limit: int = 8000):
        self.memory_dir = Path(memory_dir)
        self.limits = {"user": user_limit, "memory": agent_limit}
        self._lock = threading.RLock()

    def path(self, target: Target) -> Path:
        return self.memory_dir / FILES[_check_target(target)]

    def read(self, target: Target) -> str:
        """The file's text ('' when it does not exist yet)."""
        try:
            # A stray non-UTF-8 byte from a hand edit must not break session start.
            return self.path(target).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def entries(self, target: Target) -> list[str]:
        return split_entries(self.read(target))

    def write(self, target: Target, text: str) -> None:
        """Replace a whole file (the user's own edit). Enforces the size limit."""
        text = text.replace("\r\n", "\n").strip()
        limit = self.limits[_check_target(target)]
        if len(text) > limit:
            raise InvalidInput(
                f"{FILES[target]} would be {len(text):,} characters; the limit is {limit:,}. "
                "Shorten it (or raise the limit in the configuration)."
            )
        with self._lock:
            write_text(self.path(target), text + "\n" if text else "")

    def add(self, target: Target, entry: str) -> str:
        """Add one entry; return a status line. InvalidInput when full or refused."""
        entry = _clean_entry(entry)
        with self._lock:
            entries = self.entries(target)
            if entry in entries:
                return f"Already in {FILES[target]}; nothing changed."
            return self._save(target, [*entries, entry], f"Added to {FILES[target]}")

    def replace(self, target: Target, old: str, new: str) -> str:
        """Replace the one entry containing ``old`` with ``new``."""
        new = _clean_entry(new)
        with self._lock:
            entries = self.entries(target)
            index = self._find(target, entries, old)
            entries[index] = new
            return self._save(target, entries, f"Replaced an entry in {FILES[target]}")

    def remove(self, target: Target, old: str) -> str:
        """Remove the one entry containing ``old``."""
        with self._lock:
            entries = self.entries(target)
            del entries[self._find(target, entries, old)]
            return self._save(target, entries, f"Removed an entry from {FILES[target]}")

    def snapshot(self) -> str:
        """The profile as it goes into a system prompt; flagged entries are withheld."""
        sections = []
        for target, title in (("user", "About the user"), ("memory", "Your own notes")):
            lines = []
            for entry in self.entries(target):
                reasons = scan(entry)
                if reasons:
                    lines.append(
                        "- [an entry was withheld because it looked unsafe "
                        f"({reasons[0].split(' (')[0]}); the user can review it]"
                    )
                else:
                    lines.append(_as_bullet(entry))
            if lines:
                sections.append(f"## {title} ({FILES[target]})\n" + "\n".join(lines))
        return "\n\n".join(sections)

    def flagged(self) -> list[tuple[str, str, str]]:
        """``(target, entry, reason)`` for every entry the guard flags, for the user to review."""
        found = []
        for target in ("user", "memory"):
            for entry in self.entries(target):
                for reason in scan(entry):
                    found.append((target, entry, reason))
        return found

    def usage(self, target: Target) -> tuple[int, int]:
        """``(characters used, limit)``."""
        return len(join_entries(self.entries(target))), self.limits[_check_target(target)]

    # -- internals -------------------------------------------------------------

    def _save(self, target: Target, entries: list[str], done: str) -> str:
        text = join_entries(entries)
        limit = self.limits[target]
        if len(text) > limit:
            used = len(join_entries(self.entries(target)))
            raise InvalidInput(
                f"{FILES[target]} is full ({used:,} of {limit:,} characters; this change needs "
                f"{len(text) - limit:,} more). Consolidate first: merge related entries with "
                "action 'replace' or drop outdated ones with action 'remove', then try again."
            )
        write_text(self.path(target), text + "\n" if text else "")
        return f"{done} ({len(text):,}/{limit:,} characters, {len(entries)} entries)."

    @staticmethod
    def _find(target: Target, entries: list[str], old: str) -> int:
        needle = (old or "").strip()
        if not needle:
            raise InvalidInput("Say which entry: pass a distinctive part of its text as 'old'.")
        exact = [i for i, entry in enumerate(entries) if entry.strip() == needle]
        if exact:
            return exact[0]  # "Likes tea" means that entry, not also "Likes tea and coffee"
        matches = [i for i, entry in enumerate(entries) if needle in entry]
        if not matches:
            raise InvalidInput(f"No entry in {FILES[target]} contains {needle[:80]!r}.")
        if len(matches) > 1 and len({entries[i] for i in matches}) > 1:
            raise InvalidInput(
                f"{len(matches)} entries in {FILES[target]} contain {needle[:80]!r}; "
                "pass a longer, unique part of the one you mean."
            )
        return matches[0]


def split_entries(text: str) -> list[str]:
    """Entries of a profile file: ``§``-separated, or paragraphs when there is no ``§``."""
    text = text.replace("\r\n", "\n").strip()
    if not text:
        return []
    if _SEPARATOR_LINE.search(text):
        return [chunk.strip() for chunk in _SEPARATOR_LINE.split(text) if chunk.strip()]
    entries = []
    for paragraph in re.split(r"\n[ \t]*\n", text):
        lines = [line for line in paragraph.strip().splitlines() if line.strip()]
        if lines and all(line.lstrip().startswith(("- ", "* ")) for line in lines):
            entries.extend(line.strip() for line in lines)  # a bullet list: one entry per line
        elif lines:
            entries.append("\n".join(lines))
    return entries


def join_entries(entries: list[str]) -> str:
    return f"\n{SEPARATOR}\n".join(entries)


def _clean_entry(entry: str) -> str:
    entry = (entry or "").replace("\r\n", "\n").strip()
    if not entry:
        raise InvalidInput("The entry is empty; pass the text to remember.")
    # No separator lines and no blank lines inside an entry: both would split it on reading.
    entry = re.sub(r"\n[ \t]*\n+", "\n", _SEPARATOR_LINE.sub("", entry)).strip()
    if not entry:
        raise InvalidInput(f"The entry holds only the separator {SEPARATOR!r}; pass real text.")
    reasons = scan(entry)
    if reasons:
        raise InvalidInput(
            f"Refused: the entry looks like {reasons[0]}. Profile memory is shown to the model "
            "in every session, so it must not hold instructions, role markers, secrets or "
            "hidden characters."
        )
    return entry


def _as_bullet(entry: str) -> str:
    lines = entry.splitlines()
    if lines[0].lstrip().startswith(("- ", "* ")):
        return entry
    return "- " + "\n  ".join(lines)


def _check_target(target: str) -> str:
    if target not in FILES:
        raise InvalidInput(f"Unknown memory target {target!r}: use 'user' or 'memory'.")
    return target
