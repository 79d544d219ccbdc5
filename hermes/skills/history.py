"""Earlier versions of a skill, kept beside it.

Layout: ``skills/<name>/.versions/v<N>.md`` holds the SKILL.md text that
version N had when it was replaced; the current version is ``SKILL.md``
itself. The folder is hidden and its files are not named SKILL.md, so no
skill loader (ours or another agent's, recursive or not) mistakes a past
version for a skill, and exports leave it out.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hermes.atomic import write_text
from hermes.errors import NotFound

VERSIONS_DIR = ".versions"
_VERSION_FILE = re.compile(r"^v([1-9][0-9]{0,8})\.md$")


@dataclass(frozen=True)
class SkillVersion:
    """One version of a skill: its number, when it was written, and whether it is current."""

    version: int
    updated_at: str | None
    current: bool = False

    def to_dict(self) -> dict:
        return {"version": self.version, "updated_at": self.updated_at, "current": self.current}


def archive(folder: Path, version: int, text: str) -> None:
    """Keep ``text`` as version ``version`` of the skill in ``folder``."""
    write_text(folder / VERSIONS_DIR / f"v{version}.md", text)


def archived(folder: Path) -> dict[int, Path]:
    """The kept earlier versions: number -> file."""
    base = folder / VERSIONS_DIR
    if not base.is_dir() or base.is_symlink():
        return {}
    found = {}
    for entry in base.iterdir():
        match = _VERSION_FILE.match(entry.name)
        if match and entry.is_file() and not entry.is_symlink():
            found[int(match.group(1))] = entry
    return found


def read_archived(folder: Path, version: int) -> str:
    path = archived(folder).get(version)
    if path is None:
        raise NotFound(f"Skill {folder.name!r} has no version {version}.")
    return path.read_text(encoding="utf-8")


def unified_diff(name: str, a: int, a_text: str, b: int, b_text: str) -> str:
    """A unified diff of two SKILL.md texts, labelled with the versions."""
    return "".join(
        difflib.unified_diff(
            a_text.splitlines(keepends=True),
            b_text.splitlines(keepends=True),
            fromfile=f"{name}/SKILL.md@v{a}",
            tofile=f"{name}/SKILL.md@v{b}",
        )
    )


def file_time(path: Path) -> str | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
    except OSError:
        return None
