"""Importing and exporting skill folders, treating every input as hostile.

An import is checked whole before anything lands in the skills folder: zip
entries with absolute paths, ``..`` parts or symlinks, symlinks inside a
folder, oversized or too many files, and unparseable SKILL.md files all
refuse the import. Accepted skills are staged in a hidden folder under the
skills root and moved in by rename, so a refused import writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from hermes.atomic import replacing
from hermes.errors import SkillError
from hermes.privacy import private_folder
from hermes.skills.history import VERSIONS_DIR
from hermes.skills.schema import (
    MAX_DESCRIPTION,
    MAX_FILE_BYTES,
    SKILL_FILE,
    parse_skill_md,
    validate_name,
)

MAX_FILES = 1_000
MAX_TOTAL_BYTES = 50_000_000
MAX_MEMBER_BYTES = 10_000_000
SKILL_FILE_NAMES = (SKILL_FILE, "skill.md")


@dataclass
class Collected:
    """What an import found: staged skills ``[(name, folder)]`` and ``[(what, why)]`` skipped."""

    found: list[tuple[str, Path]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


@contextlib.contextmanager
def collect(path: Path, *, staging_root: Path) -> Iterator[Collected]:
    """Stage the skills found at ``path``.

    A single skill (a SKILL.md, a skill folder, a zip of one) that cannot be
    used raises SkillError. In a folder of skills, each unusable skill is
    skipped with its reason and the rest still import. A zip with a hostile
    entry (a path out of the archive, a link, a bomb) is always refused whole.
    The staging area is removed on exit; the caller moves the folders it wants
    out of it first.
    """
    if not path.exists():
        raise SkillError(f"Nothing to import at {path}: no such file or folder.")
    private_folder(staging_root)
    staging = Path(tempfile.mkdtemp(dir=staging_root, prefix=".import-"))
    try:
        source = path
        if path.is_file() and (path.suffix.lower() == ".zip" or zipfile.is_zipfile(path)):
            source = staging / "unzipped"
            _extract_zip(path, source)
        result = Collected()
        if source.is_file():
            result.found.append(_stage_file(source, staging / "skills"))
        elif _skill_file(source) is not None:
            result.found.append(_stage_folder(source, staging / "skills"))
        else:
            for folder in _skill_folders(source):
                try:
                    name, staged = _stage_folder(folder, staging / "skills" / folder.name)
                except (SkillError, OSError) as exc:
                    reason = exc.message if isinstance(exc, SkillError) else str(exc)
                    result.skipped.append((folder.name, reason))
                    continue
                if any(name == taken for taken, _ in result.found):
                    result.skipped.append(
                        (folder.name, f"another folder of this import already holds {name!r}")
                    )
                    continue
                result.found.append((name, staged))
        yield result
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_zip(folder: Path, dest: Path) -> Path:
    """Zip a skill folder as ``<name>/...``; hidden files (its history) stay behind."""
    if dest.is_dir():
        dest = dest / f"{folder.name}.zip"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with (
        replacing(dest, binary=True) as handle,
        zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive,
    ):
        for file in _files(folder):
            relative = file.relative_to(folder).as_posix()
            archive.write(file, f"{folder.name}/{relative}")
    return dest


def _skill_folders(source: Path) -> list[Path]:
    """A skill folder itself, or the skill folders directly inside a folder of skills."""
    if _skill_file(source) is not None:
        return [source]
    children = sorted(p for p in source.iterdir() if not p.name.startswith("."))
    folders = [p for p in children if p.is_dir() and not p.is_symlink() and _has_skill_file(p)]
    if not folders:
        raise SkillError(
            f"No skills found in {source.name or source}: expected a SKILL.md, or folders that "
            "each hold one."
        )
    return folders


def _has_skill_file(folder: Path) -> bool:
    """A SKILL.md is there (a symlinked one too: staging refuses it with a reason)."""
    return any((folder / name).is_file() for name in SKILL_FILE_NAMES)


def _skill_file(folder: Path) -> Path | None:
    for name in SKILL_FILE_NAMES:
        candidate = folder / name
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None


def _read_skill(path: Path, where: str) -> str:
    if path.is_symlink():
        raise SkillError(f"{where}: SKILL.md is a symlink; refusing to follow it.")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise SkillError(f"{where}: SKILL.md is larger than {MAX_FILE_BYTES} bytes.")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{where}: SKILL.md is not UTF-8 text.") from None
    try:
        skill = parse_skill_md(text)
        validate_name(skill.name)
    except SkillError as exc:
        raise SkillError(f"{where}: {exc.message}") from None
    if len(skill.description) > MAX_DESCRIPTION:
        # The description goes into every prompt's skill index. Refused rather than
        # cut: truncating would change the author's file behind their back.
        raise SkillError(
            f"{where}: the description is {len(skill.description)} characters; the Agent "
            f"Skills limit is {MAX_DESCRIPTION}. Shorten it to what the skill does and when "
            "to use it, then import it again."
        )
    return skill.name


def _stage_file(path: Path, into: Path) -> tuple[str, Path]:
    name = _read_skill(path, path.name)
    target = into / name
    target.mkdir(parents=True)
    shutil.copyfile(path, target / SKILL_FILE)
    return name, target


def _stage_folder(folder: Path, into: Path) -> tuple[str, Path]:
    skill_file = _skill_file(folder)
    if skill_file is None:
        raise SkillError(f"{folder.name}: SKILL.md is a symlink; refusing to follow it.")
    name = _read_skill(skill_file, folder.name)
    files = _files(folder, strict=True)
    if len(files) > MAX_FILES:
        raise SkillError(f"{folder.name}: more than {MAX_FILES} files.")
    if sum(f.stat().st_size for f in files) > MAX_TOTAL_BYTES:
        raise SkillError(f"{folder.name}: larger than {MAX_TOTAL_BYTES // 1_000_000} MB.")
    target = into / name
    for file in files:
        relative = file.relative_to(folder)
        if file == skill_file:
            relative = Path(SKILL_FILE)
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target / relative)
        if file.stat().st_mode & stat.S_IXUSR:  # a script stays runnable (by its owner only)
            (target / relative).chmod(0o700)
    return name, target


def _files(folder: Path, *, strict: bool = False) -> list[Path]:
    """Regular files under ``folder``, hidden ones left out. ``strict``: symlinks refuse."""
    found = []
    for current, dirs, names in os.walk(folder, followlinks=False):
        base = Path(current)
        for d in list(dirs):
            if d.startswith(".") or d == VERSIONS_DIR:
                dirs.remove(d)
            elif (base / d).is_symlink() and strict:
                raise SkillError(f"{folder.name}: {d} is a symlink; skills must not hold links.")
        dirs.sort()
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = base / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode) and strict:
                raise SkillError(f"{folder.name}: {name} is a symlink; skills must not hold links.")
            if stat.S_ISREG(mode):
                found.append(path)
    return found


def _extract_zip(path: Path, into: Path) -> None:
    """Extract a zip after checking every entry; any bad entry refuses the whole file."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SkillError(f"{path.name} is not a readable zip file ({exc}).") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_FILES:
            raise SkillError(f"{path.name} holds more than {MAX_FILES} entries.")
        total = 0
        plan = []
        for info in members:
            parts = _safe_parts(info.filename, path.name)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SkillError(f"{path.name}: entry {info.filename!r} is a symlink; refused.")
            if info.flag_bits & 0x1:
                raise SkillError(f"{path.name} is encrypted; export it without a password.")
            if info.file_size > MAX_MEMBER_BYTES:
                raise SkillError(f"{path.name}: entry {info.filename!r} is too large.")
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise SkillError(f"{path.name} unpacks to more than {MAX_TOTAL_BYTES} bytes.")
            if parts:
                plan.append((info, parts))
        into.mkdir(parents=True)
        for info, parts in plan:
            try:
                _extract_member(archive, info, into.joinpath(*parts), path.name)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                # A damaged entry (bad CRC, lying header, unknown compression).
                raise SkillError(
                    f"{path.name}: entry {info.filename!r} cannot be read ({exc}); "
                    "the zip is damaged. Nothing was imported."
                ) from None
            except OSError as exc:
                # The staging folder is removed whole by the caller, so nothing stays behind.
                reason = exc.strerror or type(exc).__name__
                if isinstance(exc, FileExistsError | NotADirectoryError | IsADirectoryError):
                    # ``s/x`` and ``s/x/y`` both present: a file where a folder must go.
                    reason += "; the zip holds a file and a folder of the same name"
                raise SkillError(
                    f"{path.name}: entry {info.filename!r} cannot be unpacked ({reason}). "
                    "Nothing was imported."
                ) from None


def _extract_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, zip_name: str
) -> None:
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    # Sizes in the header can lie (zip bombs): count what really comes out.
    with archive.open(info) as source, open(target, "wb") as out:
        while chunk := source.read(65536):
            written += len(chunk)
            if written > MAX_MEMBER_BYTES:
                raise SkillError(f"{zip_name}: entry {info.filename!r} is too large.")
            out.write(chunk)


def _safe_parts(filename: str, zip_name: str) -> tuple[str, ...]:
    normalized = filename.replace("\\", "/")
    pure = PurePosixPath(normalized)
    if (
        normalized.startswith("/")
        or (len(normalized) > 1 and normalized[1] == ":")
        or ".." in pure.parts
        or "\x00" in normalized
    ):
        raise SkillError(
            f"{zip_name}: entry {filename!r} points outside the archive; refusing the whole file."
        )
    return tuple(part for part in pure.parts if part not in ("", "."))
