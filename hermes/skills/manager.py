"""The skill library on disk: ``HERMES_HOME/skills/<name>/SKILL.md`` folders.

Every write goes through a temporary file (or staging folder) and a rename,
so a crash never leaves half a skill. Parsed skills are cached by file stamp,
so listing or ranking 500 skills costs a directory scan and 500 ``stat`` calls.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from hermes.atomic import write_text
from hermes.errors import Conflict, HermesError, NotFound, SkillError
from hermes.privacy import private_folder, secure_tree
from hermes.skills import history
from hermes.skills.history import SkillVersion
from hermes.skills.index import Terms, rank
from hermes.skills.locking import lock_for
from hermes.skills.schema import (
    MAX_FILE_BYTES,
    SKILL_FILE,
    Skill,
    parse_skill_md,
    render_skill_md,
    split_triggers,
    validate_name,
    validate_skill,
)

log = logging.getLogger(__name__)


@dataclass
class ImportReport:
    """What an import did: the skills installed (``replaced`` names those that overwrote
    an existing one) and ``[(what, why)]`` for each skill it skipped."""

    installed: list[Skill] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class UseCounter(Protocol):
    """Where skill uses are counted: the store (``hermes.store.Store``)."""

    def count_skill_use(self, name: str) -> None: ...

    def skill_use_counts(self) -> dict[str, tuple[int, str | None]]: ...


class SkillManager:
    """Create, find, refine and version the skills in one folder.

    Uses are counted by ``uses`` (the database), never in SKILL.md: a skill
    imported unchanged stays byte-identical however often it is used.
    Without a counter, uses are not counted.
    """

    def __init__(self, root: Path, *, uses: UseCounter | None = None, embedder=None):
        self.root = Path(root).expanduser().resolve()
        self._uses = uses
        # Recall: with an Embedder, selection fuses meaning with keywords (skills/semantic.py).
        self._vectors = None
        if embedder is not None:
            from hermes.skills.semantic import SkillVectors

            self._vectors = SkillVectors(embedder, self.root)
        # Shared by every manager on this folder, and held against other processes.
        self._lock = lock_for(self.root)
        self._cache: dict[str, tuple[tuple, Skill | None, Terms | None]] = {}

    # -- reading ---------------------------------------------------------------

    def list(self) -> list[Skill]:
        """Every loadable skill, by name. Unreadable ones are skipped with a warning."""
        return [skill for skill, _ in self._entries()]

    def get(self, name: str) -> Skill:
        """The skill called ``name``; SkillError for an illegal name, NotFound if absent."""
        validate_name(name)
        folder = self.root / name
        if folder.is_symlink() or not (folder / SKILL_FILE).is_file():
            raise NotFound(f"No skill named {name!r}. `hermes skills list` shows the skills.")
        loaded = self._load(folder)
        if loaded is None:
            raise SkillError(f"Skill {name!r} has an unreadable SKILL.md; fix or delete it.")
        return self._counted([loaded])[0][0]

    def exists(self, name: str) -> bool:
        try:
            self.get(name)
        except (NotFound, SkillError):
            return False
        return True

    def search(self, query: str, limit: int = 20) -> list[Skill]:
        """Skills matching ``query`` in name, description, triggers or body, best first."""
        entries = self._entries()
        if not query or not query.strip():
            return [skill for skill, _ in entries][:limit]
        found = self._rank(query, entries, limit=limit, use_body=True)
        needle = " ".join(query.lower().split())
        for skill, _ in entries:
            if len(found) >= limit:
                break
            haystack = (
                f"{skill.name}\n{skill.description}\n{','.join(skill.triggers)}\n{skill.body}"
            )
            if skill not in found and needle in haystack.lower():
                found.append(skill)
        return found

    def relevant(self, text: str, limit: int = 8) -> list[Skill]:
        """The few skills most related to a user message, for the per-message index."""
        return self._rank(text, self._entries(), limit=limit, use_body=False)

    def _rank(self, query: str, entries, *, limit: int, use_body: bool) -> list[Skill]:
        if self._vectors is None:
            return rank(query, entries, limit=limit, use_body=use_body)
        from hermes.skills.semantic import fused_rank

        return fused_rank(query, entries, self._vectors, limit=limit, use_body=use_body)

    def terms(self) -> list[tuple[Skill, Terms]]:
        """Skills with their indexed words (the curator uses them to spot twins)."""
        return self._entries()

    # -- writing ---------------------------------------------------------------

    def create(
        self,
        name: str,
        description: str,
        body: str,
        *,
        triggers: Iterable[str] = (),
        created_by: str = "agent",
        source_session: int | str | None = None,
    ) -> Skill:
        """Write a new skill at version 1. Conflict if the name is taken."""
        skill = Skill(
            name=name,
            description=" ".join(str(description).split()),
            body=str(body).strip(),
            metadata=_hermes_metadata(
                triggers=triggers,
                version=1,
                uses=0,
                created_by="agent" if created_by == "agent" else "user",
                source_session=source_session,
            ),
        )
        validate_skill(skill)
        with self._lock:
            self._install(skill.name, {SKILL_FILE: render_skill_md(skill)})
        return self.get(name)

    def refine(
        self,
        name: str,
        *,
        description: str | None = None,
        body: str | None = None,
        triggers: Iterable[str] | None = None,
        source_session: int | str | None = None,
    ) -> Skill:
        """Write a new version of a skill (version + 1); the previous one is kept."""
        return self.update(
            name,
            description=description,
            body=body,
            triggers=triggers,
            source_session=source_session,
        )

    def update(
        self,
        name: str,
        text: str | None = None,
        *,
        description: str | None = None,
        body: str | None = None,
        triggers: Iterable[str] | str | None = None,
        source_session: int | str | None = None,
    ) -> Skill:
        """A user's edit (web editor, PUT /api/skills/<name>): version + 1.

        Pass either the whole SKILL.md ``text`` (its name must stay the same;
        version and uses are managed here, whatever the text says) or fields.
        """
        with self._lock:
            current = self.get(name)
            if text is not None:
                edited = parse_skill_md(text)
                if edited.name != name:
                    raise SkillError(
                        f"The edited text names the skill {edited.name!r}; a skill cannot be "
                        f"renamed by editing, so keep 'name: {name}'."
                    )
                keep = {
                    k: current.metadata[k]
                    for k in ("version", "uses", "created-by")
                    if k in current.metadata
                }
                changed = replace(edited, path=current.path, metadata={**edited.metadata, **keep})
            else:
                changed = current
                if description is not None:
                    changed = replace(changed, description=" ".join(description.split()))
                if body is not None:
                    changed = replace(changed, body=body.strip())
            if triggers is not None:
                listed = triggers if isinstance(triggers, str) else list(triggers)
                changed = changed.with_metadata(triggers=", ".join(split_triggers(listed)))
            if source_session is not None:
                changed = changed.with_metadata(source_session=str(source_session))
            return self._write_version(current, changed)

    def record_use(self, name: str) -> Skill:
        """Count one use (uses + 1) in the database; the skill's files are not touched."""
        self.get(name)
        if self._uses is not None:
            self._uses.count_skill_use(name)
        return self.get(name)

    def delete(self, name: str) -> None:
        """Remove a skill with all its files and versions."""
        with self._lock:
            self.get(name)
            folder = self.root / name
            trash = Path(tempfile.mkdtemp(dir=self.root, prefix=".trash-"))
            os.replace(folder, trash / name)
            shutil.rmtree(trash, ignore_errors=True)
            self._cache.pop(name, None)

    # -- versions --------------------------------------------------------------

    def versions(self, name: str) -> list[SkillVersion]:
        """All versions of a skill, oldest first; the last is the current one."""
        current = self.get(name)
        folder = self.root / name
        kept = {}
        for number, path in history.archived(folder).items():
            if number < current.version:
                try:
                    stamp = parse_skill_md(path.read_text(encoding="utf-8")).updated_at
                except (SkillError, OSError, UnicodeDecodeError):
                    stamp = None
                kept[number] = SkillVersion(number, stamp or history.file_time(path))
        kept[current.version] = SkillVersion(current.version, current.updated_at, current=True)
        return [kept[number] for number in sorted(kept)]

    def version_text(self, name: str, version: int) -> str:
        """The SKILL.md text of one version."""
        current = self.get(name)
        if version == current.version:
            return (self.root / name / SKILL_FILE).read_text(encoding="utf-8")
        if version > current.version:
            raise NotFound(f"Skill {name!r} is at version {current.version}; no version {version}.")
        return history.read_archived(self.root / name, version)

    def diff(self, name: str, a: int, b: int) -> str:
        """A unified diff from version ``a`` to version ``b`` (empty when identical)."""
        return history.unified_diff(
            name, a, self.version_text(name, a), b, self.version_text(name, b)
        )

    def restore(self, name: str, version: int) -> Skill:
        """Make an earlier version current again, as a new version (nothing is lost)."""
        with self._lock:
            current = self.get(name)
            old = parse_skill_md(self.version_text(name, version), folder_name=name)
            return self._write_version(current, replace(old, path=current.path))

    # -- import / export -------------------------------------------------------

    def import_skills(self, path: Path, *, replace: bool = False) -> ImportReport:
        """Install what can be installed from a folder, a SKILL.md, a .zip or a folder of skills.

        Each skill that cannot be (unreadable, or its name taken and ``replace``
        off) is reported in ``skipped`` with its reason; the others still land.
        With ``replace`` an existing skill is overwritten as a new version, its
        previous text kept in its history.
        """
        from hermes.skills.archive import collect

        report = ImportReport()
        with self._lock, collect(Path(path), staging_root=self.root) as collected:
            report.skipped.extend(collected.skipped)
            for name, folder in collected.found:
                exists = (self.root / name).exists() or (self.root / name).is_symlink()
                if exists and not replace:
                    report.skipped.append(
                        (name, f"a skill named {name!r} already exists (--replace overwrites it)")
                    )
                    continue
                try:
                    secure_tree(folder)  # imported files may be world-readable
                    if exists:
                        self._replace_with(name, folder)
                        report.replaced.append(name)
                    else:
                        os.replace(folder, self.root / name)
                except (OSError, HermesError) as exc:
                    reason = exc.message if isinstance(exc, HermesError) else exc.strerror
                    report.skipped.append((name, f"could not install it: {reason}"))
                    continue
                self._cache.pop(name, None)
                report.installed.append(self.get(name))
        return report

    def import_path(self, path: Path, *, replace: bool = False) -> list[Skill]:
        """Like :meth:`import_skills`, but an import that installs nothing raises its reason."""
        report = self.import_skills(path, replace=replace)
        if not report.installed and report.skipped:
            what, reason = report.skipped[0]
            error = Conflict if "already exists" in reason else SkillError
            raise error(reason if reason.startswith(what) else f"{what}: {reason}")
        return report.installed

    def export_zip(self, name: str, dest: Path) -> Path:
        """Write the skill as ``<name>/...`` into a zip (without its version history)."""
        from hermes.skills.archive import write_zip

        self.get(name)
        return write_zip(self.root / name, Path(dest))

    # -- internals -------------------------------------------------------------

    def _write_version(self, current: Skill, changed: Skill) -> Skill:
        folder = self.root / current.name
        new = changed.with_metadata(version=str(current.version + 1), updated_at=_now())
        # Keys a foreign skill already had stay tolerated; new unknown keys do not.
        fresh_extra = {k: v for k, v in new.extra.items() if k not in current.extra}
        validate_skill(replace(new, extra=fresh_extra), folder_name=current.name)
        history.archive(folder, current.version, (folder / SKILL_FILE).read_text(encoding="utf-8"))
        write_text(folder / SKILL_FILE, render_skill_md(new))
        secure_tree(folder / history.VERSIONS_DIR)
        return self.get(current.name)

    def _replace_with(self, name: str, staged: Path) -> None:
        """Swap in a staged folder for skill ``name`` as its next version, history kept."""
        folder = self.root / name
        if folder.is_symlink() or not folder.is_dir():
            raise SkillError(f"{folder} is not a skill folder; remove it by hand first")
        current = self.get(name)
        old_text = (folder / SKILL_FILE).read_text(encoding="utf-8")
        kept = folder / history.VERSIONS_DIR
        if kept.is_dir() and not kept.is_symlink():
            shutil.copytree(kept, staged / history.VERSIONS_DIR, dirs_exist_ok=True)
        history.archive(staged, current.version, old_text)
        incoming = parse_skill_md((staged / SKILL_FILE).read_text(encoding="utf-8"))
        newer = incoming.with_metadata(version=str(current.version + 1), updated_at=_now())
        write_text(staged / SKILL_FILE, render_skill_md(newer))
        trash = Path(tempfile.mkdtemp(dir=self.root, prefix=".trash-"))
        os.replace(folder, trash / name)
        try:
            os.replace(staged, folder)
        except OSError:
            os.replace(trash / name, folder)  # put the old one back
            raise
        finally:
            shutil.rmtree(trash, ignore_errors=True)

    def _install(self, name: str, files: dict[str, str]) -> None:
        private_folder(self.root)
        if (self.root / name).exists():
            raise Conflict(
                f"A skill named {name!r} already exists; refine it or choose another name."
            )
        staging = Path(tempfile.mkdtemp(dir=self.root, prefix=".staging-"))
        try:
            for relative, text in files.items():
                (staging / relative).write_text(text, encoding="utf-8")
            try:
                secure_tree(staging)
                os.rename(staging, self.root / name)
            except OSError:
                raise Conflict(f"A skill named {name!r} already exists.") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _entries(self) -> list[tuple[Skill, Terms]]:
        if not self.root.is_dir():
            return []
        found = []
        seen = set()
        with os.scandir(self.root) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.startswith("."):
                    continue
                if entry.is_symlink():
                    # Never followed: a link could point a write anywhere on disk.
                    self._warn_once(
                        entry.name,
                        "it is a symlink; copy the folder in or `hermes skills import` it",
                    )
                    continue
                if not entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    validate_name(entry.name)
                except SkillError:
                    self._warn_once(entry.name, "folder name is not a valid skill name")
                    continue
                loaded = self._load(Path(entry.path))
                if loaded is not None:
                    found.append(loaded)
                    seen.add(entry.name)
        for stale in set(self._cache) - seen:
            self._cache.pop(stale, None)
        return self._counted(found)

    def _counted(self, entries: list[tuple[Skill, Terms]]) -> list[tuple[Skill, Terms]]:
        """The skills with their use counts from the database."""
        if self._uses is None or not entries:
            return entries
        counts = self._uses.skill_use_counts()
        out = []
        for skill, terms in entries:
            uses, last = counts.get(skill.name, (0, None))
            out.append((replace(skill, counted_uses=uses, last_used_at=last), terms))
        return out

    def _warn_once(self, name: str, reason: str) -> None:
        if self._cache.get(name, ((),))[0] != ("bad-name",):
            log.warning("skipping skill folder %s: %s", name, reason)
            self._cache[name] = (("bad-name",), None, None)

    def _load(self, folder: Path) -> tuple[Skill, Terms] | None:
        """Parse a skill folder leniently, through the cache. None when unusable."""
        path = folder / SKILL_FILE
        try:
            info = path.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        cached = self._cache.get(folder.name)
        if cached is not None and cached[0] == stamp:
            return None if cached[1] is None else (cached[1], cached[2])
        skill = terms = None
        try:
            if info.st_size > MAX_FILE_BYTES:
                raise SkillError(f"SKILL.md is larger than {MAX_FILE_BYTES} bytes")
            skill = parse_skill_md(path.read_text(encoding="utf-8"), folder_name=folder.name)
            skill = replace(skill, path=folder)
            terms = Terms.of(skill)
        except (SkillError, OSError, UnicodeDecodeError) as exc:
            log.warning("skipping skill %s: %s", folder.name, exc)
            skill = terms = None
        self._cache[folder.name] = (stamp, skill, terms)
        return None if skill is None else (skill, terms)


def _hermes_metadata(
    *,
    triggers: Iterable[str],
    version: int,
    uses: int,
    created_by: str,
    source_session: int | str | None,
) -> dict[str, str]:
    metadata = {
        "triggers": ", ".join(split_triggers(list(triggers))),
        "version": str(version),
        "uses": str(uses),
        "created-by": created_by,
        "updated-at": _now(),
    }
    if source_session is not None and str(source_session).strip():
        metadata["source-session"] = str(source_session).strip()
    if not metadata["triggers"]:
        del metadata["triggers"]
    return metadata
