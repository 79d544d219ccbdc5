"""The Agent Skills ``SKILL.md`` format: parse, validate and write.

A skill is a folder ``<name>/SKILL.md``: YAML frontmatter between two ``---``
lines, then a markdown body. The open format (agentskills.io) allows only six
top-level keys; Hermes keeps its own fields (triggers, version, uses, ...) as
strings under ``metadata`` so that our files pass the reference validator
(``skills-ref validate``) and load unchanged in other agents.

Two levels of checking:

* :func:`parse_skill_md` is lenient, for skills written by anyone: unknown keys
  are kept, non-string metadata values become strings. It refuses only a file
  whose frontmatter is unparseable or lacks ``name`` / ``description``.
* :func:`validate_skill` is strict, for skills Hermes writes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from hermes.errors import SkillError

SKILL_FILE = "SKILL.md"
SPEC_KEYS = ("name", "description", "license", "compatibility", "allowed-tools", "metadata")
# Hermes' own fields, in the order we write them under ``metadata``.
HERMES_KEYS = ("triggers", "version", "uses", "created-by", "source-session", "updated-at")
RESOURCE_DIRS = ("scripts", "references", "assets")

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY = 100_000
MAX_FILE_BYTES = 1_000_000
MAX_LISTED_FILES = 500
MAX_TRIGGERS = 20
MAX_TRIGGER_CHARS = 64
# Frontmatter is a few short fields; a bigger block is not a skill header (and YAML
# parsing cost grows with it). One metadata value is cut at this length when read.
MAX_FRONTMATTER = 64_000
MAX_METADATA_VALUE = 4_000

NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# libyaml's safe loader when present: parsing is most of the cost of a cold cache.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_LEADING_TABS = re.compile(r"^[ \t]*\t[ \t]*", re.MULTILINE)
_FRONTMATTER_RE = re.compile(r"\A---[ \t]*\n(.*?)\n?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Skill:
    """One skill as read from (or about to be written to) its SKILL.md."""

    name: str
    description: str
    body: str = ""
    path: Path | None = None  # the skill's folder, when it lives on disk
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    # Top-level keys outside the spec, kept so a foreign skill survives a rewrite.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # Uses counted in the database since counts left the file (see SkillManager),
    # and when the skill was last used (ISO time, or None).
    counted_uses: int = field(default=0, compare=False)
    last_used_at: str | None = field(default=None, compare=False)

    def __hash__(self) -> int:
        # The mapping fields are not hashable; name, version and text identify a skill.
        return hash((self.name, self.description, self.body, self.metadata.get("version")))

    @property
    def triggers(self) -> list[str]:
        return split_triggers(self.metadata.get("triggers", ""))

    @property
    def version(self) -> int:
        return _as_int(self.metadata.get("version"), 1, minimum=1)

    @property
    def uses(self) -> int:
        """Times used: any count an older Hermes wrote in the file, plus the database's."""
        return _as_int(self.metadata.get("uses"), 0, minimum=0) + self.counted_uses

    @property
    def created_by(self) -> str:
        return "agent" if self.metadata.get("created-by") == "agent" else "user"

    @property
    def source_session(self) -> int | str | None:
        raw = (self.metadata.get("source-session") or "").strip()
        if not raw:
            return None
        return int(raw) if raw.isdigit() else raw

    @property
    def updated_at(self) -> str | None:
        """ISO timestamp of the last content change (file time for foreign skills)."""
        stamp = self.metadata.get("updated-at")
        if stamp:
            return stamp
        if self.path is not None:
            try:
                mtime = (self.path / SKILL_FILE).stat().st_mtime
            except OSError:
                return None
            return datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds")
        return None

    @property
    def files(self) -> list[str]:
        """Relative paths of every file bundled with the skill (SKILL.md and hidden ones aside).

        Skills from the wild keep documents beside SKILL.md (``FORMS.md``,
        ``reference/*.md``), not only under scripts/, references/ and assets/.
        Links are never followed.
        """
        if self.path is None:
            return []
        found = []
        for current, dirs, names in os.walk(self.path, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            base = Path(current)
            for name in sorted(names):
                item = base / name
                if name.startswith(".") or item.is_symlink() or not item.is_file():
                    continue
                relative = item.relative_to(self.path).as_posix()
                if relative != SKILL_FILE:
                    found.append(relative)
                if len(found) >= MAX_LISTED_FILES:
                    return found
        return found

    def with_metadata(self, **fields: str | None) -> Skill:
        """A copy with metadata keys (underscores become hyphens) set or, for None, removed."""
        merged = dict(self.metadata)
        for key, value in fields.items():
            key = key.replace("_", "-")
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = str(value)
        return replace(self, metadata=merged)

    def to_dict(self) -> dict[str, Any]:
        """The summary shape of ``GET /api/skills``."""
        return {
            "name": self.name,
            "description": self.description,
            "triggers": self.triggers,
            "version": self.version,
            "uses": self.uses,
            "last_used_at": self.last_used_at,
            "created_by": self.created_by,
            "updated_at": self.updated_at,
        }

    def to_detail_dict(self) -> dict[str, Any]:
        """The shape of ``GET /api/skills/<name>``: the summary plus body, files and the
        id of the session that taught it (None for skills written elsewhere)."""
        source = self.source_session
        return {
            **self.to_dict(),
            "body": self.body,
            "files": self.files,
            "source_session": source if isinstance(source, int) else None,
        }


def split_triggers(raw: str | list | tuple | None) -> list[str]:
    """Comma-separated (or listed) keywords, trimmed, lowercased, deduplicated."""
    if raw is None:
        return []
    parts = raw if isinstance(raw, list | tuple) else str(raw).replace("\n", ",").split(",")
    seen: list[str] = []
    for part in parts:
        word = " ".join(str(part).split()).strip().lower()
        if word and word not in seen:
            seen.append(word)
    return seen


def validate_name(name: object) -> str:
    """Return ``name`` if it is a legal skill (and folder) name, else raise SkillError."""
    if not isinstance(name, str) or not name:
        raise SkillError("A skill needs a name: 1-64 characters of a-z, 0-9 and hyphens.")
    if len(name) > MAX_NAME:
        raise SkillError(f"Skill name is {len(name)} characters long; the limit is {MAX_NAME}.")
    if not NAME_RE.match(name):
        raise SkillError(
            f"Invalid skill name {name[:80]!r}: use lowercase a-z, 0-9 and single hyphens "
            "between words (no leading, trailing or double hyphens), e.g. 'deploy-flask-app'."
        )
    return name


def parse_skill_md(text: str, *, folder_name: str | None = None) -> Skill:
    """Parse SKILL.md text leniently (any agent's skill). Raise SkillError if unusable."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    match = _FRONTMATTER_RE.match(text)
    if match is None:
        raise SkillError("SKILL.md must start with YAML frontmatter between two '---' lines.")
    if len(match.group(1)) > MAX_FRONTMATTER:
        raise SkillError(
            f"SKILL.md frontmatter is {len(match.group(1))} characters; the limit is "
            f"{MAX_FRONTMATTER}. Keep it to name, description and a few metadata fields."
        )
    data = _load_frontmatter(match.group(1))
    # Other agents' files: a number or a date as the name or description is still text.
    name = _scalar_text(data.get("name"))
    description = _scalar_text(data.get("description"))
    if not isinstance(name, str) or not name.strip():
        raise SkillError("SKILL.md frontmatter has no 'name'.")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("SKILL.md frontmatter has no 'description'.")
    raw_meta = data.get("metadata")
    metadata = (
        {str(k): _as_str(v) for k, v in raw_meta.items()} if isinstance(raw_meta, dict) else {}
    )
    allowed = data.get("allowed-tools")
    if isinstance(allowed, list):
        allowed = " ".join(str(item) for item in allowed)
    return Skill(
        name=folder_name or name.strip(),
        description=description.strip(),
        body=text[match.end() :].strip("\n").rstrip(),
        license=_optional_str(data.get("license")),
        compatibility=_optional_str(data.get("compatibility")),
        allowed_tools=_optional_str(allowed),
        metadata=metadata,
        extra={str(k): v for k, v in data.items() if k not in SPEC_KEYS},
    )


def _load_frontmatter(text: str) -> dict:
    """Strict YAML first; for hand-written files that are not quite YAML, the usual repairs.

    Other agents load these files anyway, so we must too: a tab as indentation
    is read as two spaces, and a plain value holding ``: `` (``description:
    Use when: the user tags a release``) is read as the text it obviously is.
    Our own files never need this: :func:`render_skill_md` writes strict YAML.
    """
    try:
        data = _load_yaml(text)
    except yaml.YAMLError as exc:
        data = None
        for repaired in _repairs(text):
            try:
                data = _load_yaml(repaired)
            except yaml.YAMLError:
                continue
            break
        if data is None:
            raise SkillError(
                f"SKILL.md frontmatter is not valid YAML: {_first_line(exc)}"
            ) from None
    if not isinstance(data, dict):
        raise SkillError("SKILL.md frontmatter must be a YAML mapping of keys to values.")
    return data


def _load_yaml(text: str) -> Any:
    """``yaml.load`` with the safe loader, refusing anchors and aliases.

    The safe loader shares an aliased node instead of copying it, so nine
    lists of nine aliases of nine lists... fit a few hundred bytes yet become
    millions of strings once the values are turned into text (a "billion
    laughs"). Skill headers have no use for ``&anchor`` / ``*alias``, so a file
    holding one is refused before anything is built from it.
    """
    if "&" in text or "*" in text:  # neither character: no anchor or alias possible
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise SkillError(
                    "SKILL.md frontmatter uses a YAML anchor or alias (&name / *name); "
                    "write each value out in full instead."
                )
    return yaml.load(text, Loader=_LOADER)


# ``key: value`` where the value is a plain scalar (not quoted, not a list,
# mapping, block or anchor) and holds ``: `` that YAML would read as a mapping.
_COLON_VALUE = re.compile(
    r"^(?P<key>[ ]*[A-Za-z0-9_.-]+:)[ \t]+(?P<value>[^'\"\[{|>&*!#\s][^\n]*?:[ \t][^\n]*?)[ \t]*$",
    re.MULTILINE,
)


def _repairs(text: str) -> Iterator[str]:
    """Leniently repaired versions of frontmatter that failed to parse, mildest first."""
    untabbed = _LEADING_TABS.sub(lambda m: m.group(0).replace("\t", "  "), text)
    if untabbed != text:
        yield untabbed
    quoted = _COLON_VALUE.sub(
        lambda m: f"{m.group('key')} {json.dumps(m.group('value'), ensure_ascii=False)}", untabbed
    )
    if quoted != untabbed:
        yield quoted


def _scalar_text(value: Any) -> Any:
    if isinstance(value, int | float | date) and not isinstance(value, bool):
        return str(value)
    return value


def render_skill_md(skill: Skill) -> str:
    """Write a skill as SKILL.md text. Same skill, same bytes: keys in a fixed order."""
    front: dict[str, Any] = {"name": skill.name, "description": skill.description}
    for key, value in (
        ("license", skill.license),
        ("compatibility", skill.compatibility),
        ("allowed-tools", skill.allowed_tools),
    ):
        if value is not None:
            front[key] = value
    if skill.metadata:
        ordered = {k: skill.metadata[k] for k in HERMES_KEYS if k in skill.metadata}
        ordered.update({k: skill.metadata[k] for k in sorted(skill.metadata) if k not in ordered})
        front["metadata"] = ordered
    front.update({k: skill.extra[k] for k in sorted(skill.extra)})
    yaml_text = yaml.safe_dump(
        front, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000
    )
    body = skill.body.strip("\n").rstrip()
    return f"---\n{yaml_text}---\n\n{body}\n" if body else f"---\n{yaml_text}---\n"


def validate_skill(skill: Skill, *, folder_name: str | None = None) -> Skill:
    """Strict checks for a skill Hermes writes. Return it unchanged or raise SkillError."""
    validate_name(skill.name)
    if folder_name is not None and folder_name != skill.name:
        raise SkillError(f"Skill name {skill.name!r} must equal its folder name {folder_name!r}.")
    if not skill.description.strip():
        raise SkillError("A skill needs a description: what it does and when to use it.")
    if len(skill.description) > MAX_DESCRIPTION:
        raise SkillError(
            f"Skill description is {len(skill.description)} characters; the limit is "
            f"{MAX_DESCRIPTION}. Shorten it to what the skill does and when to use it."
        )
    if skill.compatibility is not None and not 1 <= len(skill.compatibility) <= MAX_COMPATIBILITY:
        raise SkillError(f"'compatibility' must be 1-{MAX_COMPATIBILITY} characters.")
    if skill.extra:
        keys = ", ".join(sorted(skill.extra))
        raise SkillError(
            f"Unexpected top-level key(s) {keys}: the Agent Skills format allows only "
            f"{', '.join(SPEC_KEYS)}; put other fields under 'metadata'."
        )
    for key, value in skill.metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise SkillError(f"metadata {key!r} must map a string to a string.")
    if len(skill.body) > MAX_BODY:
        raise SkillError(f"Skill body is {len(skill.body)} characters; the limit is {MAX_BODY}.")
    triggers = skill.triggers
    if len(triggers) > MAX_TRIGGERS or any(len(t) > MAX_TRIGGER_CHARS for t in triggers):
        raise SkillError(
            f"Use at most {MAX_TRIGGERS} triggers of up to {MAX_TRIGGER_CHARS} characters each."
        )
    front = render_skill_md(replace(skill, body="")).split("\n", 1)[1]
    if "---" in front.rsplit("---", 1)[0]:
        # The reference parser splits the file on '---'; a value holding one would cut it.
        raise SkillError("Frontmatter values must not contain '---'.")
    return skill


def _as_int(raw: str | None, default: int, *, minimum: int) -> int:
    try:
        return max(minimum, int(str(raw).strip()))
    except (TypeError, ValueError):
        return default


def _as_str(value: Any) -> str:
    """A foreign metadata value as text (a list joined by commas), at most
    MAX_METADATA_VALUE characters: metadata is a few words, never a document."""
    if isinstance(value, list | tuple):
        text = ", ".join(str(v) for v in value)
    else:
        text = "" if value is None else str(value)
    return text[:MAX_METADATA_VALUE]


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
