"""The checks of `hermes doctor` that look at this machine: settings, folders, database.

Every check is read-only: `hermes doctor` on a machine where Hermes never ran
creates nothing (no HERMES_HOME, no database, no log). The one write is a
probe file in an existing HERMES_HOME, removed at once. The provider check
lives in :mod:`hermes.cli.doctor_provider`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes.config import Config, key_variable
from hermes.errors import HermesError, StoreError
from hermes.providers.retry import shown_url

Status = Literal["ok", "warn", "fail"]
FTS_TABLES = ("messages_fts", "sessions_fts")


@dataclass(frozen=True)
class Check:
    """One check's verdict; ``fix`` says what to do when it is not ok."""

    name: str
    status: Status
    detail: str
    fix: str | None = None


def mask(key: str | None) -> str:
    """Enough of a key to tell which one it is, never the key."""
    if not key:
        return "none"
    if key == "not-needed":
        return "none needed (local server)"
    if len(key) < 16:
        return f"{'•' * 6} ({len(key)} characters)"
    return f"{key[:3]}…{key[-4:]}"


def check_config(config: Config) -> Check:
    if config.provider is None:
        return Check(
            "configuration",
            "fail",
            "no model provider configured",
            "Set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY (or HERMES_PROVIDER="
            "openai with HERMES_BASE_URL for a local server such as Ollama), e.g. in "
            f"{config.home / '.env'}.",
        )
    variable = key_variable(config.provider)
    if not config.api_key:
        return Check(
            "configuration",
            "fail",
            f"provider {config.provider}, but {variable} is not set",
            f"Set {variable} (or point HERMES_BASE_URL at a local server that needs no key).",
        )
    detail = f"provider {config.provider}, model {config.model}, key {mask(config.api_key)}"
    if config.api_key != "not-needed":
        detail += f" ({variable})"
    if config.base_url:
        detail += f", base URL {shown_url(config.base_url)}"
    if not config.workspace.is_dir():
        return Check(
            "configuration",
            "fail",
            detail + f"; workspace {config.workspace} does not exist",
            "Create it or set HERMES_WORKSPACE to an existing folder.",
        )
    return Check("configuration", "ok", detail)


def check_home(config: Config) -> Check:
    """HERMES_HOME is a writable folder, or can be made one; nothing is created here.

    On a machine where Hermes never ran, the folder does not exist yet: the
    check then looks at the closest folder that does, which must let us create it.
    """
    home = config.home
    fix = f"Make {home} writable by you, or set HERMES_HOME to a folder you own."
    if home.exists():
        if not home.is_dir():
            return Check("data folder", "fail", f"{home} is not a folder", fix)
        try:
            # A probe file, removed again at once: permission bits alone can lie
            # (read-only mounts, root).
            with tempfile.NamedTemporaryFile(dir=home, prefix=".doctor-", delete=True) as f:
                f.write(b"ok")
                f.flush()
        except OSError as exc:
            return Check("data folder", "fail", f"{home} is not writable: {exc.strerror}", fix)
        return Check("data folder", "ok", f"{home} is writable")
    parent = home.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return Check("data folder", "fail", f"{home} cannot be created: {parent} is a file", fix)
    # Try it: access() answers yes to root on read-only mounts and in /sys or /proc.
    try:
        probe = Path(tempfile.mkdtemp(dir=parent, prefix=".hermes-doctor-"))
    except OSError as exc:
        return Check(
            "data folder",
            "fail",
            f"{home} cannot be created: {parent} refuses new folders ({exc.strerror or exc})",
            fix,
        )
    try:
        (probe / "probe").write_bytes(b"ok")
    except OSError as exc:
        return Check(
            "data folder",
            "fail",
            f"{home} cannot be created: files cannot be written under {parent} "
            f"({exc.strerror or exc})",
            fix,
        )
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    return Check("data folder", "ok", f"{home} does not exist yet (created on first use)")


def check_database(config: Config) -> Iterator[Check]:
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from hermes.store import migrate
    from hermes.store.engine import make_engine, read_transaction, sqlite_path, write_transaction

    try:
        path = sqlite_path(config.database_url)
    except HermesError as exc:
        yield Check("database", "fail", exc.message, "Fix HERMES_DATABASE_URL.")
        return
    if not path.exists():
        yield Check("database", "ok", f"{path} not created yet (it is created on first use)")
        return
    engine = make_engine(config.database_url)
    try:
        with read_transaction(engine) as connection:
            current = migrate.current_revision(connection)
            head = migrate.head_revision()
            integrity = [row[0] for row in connection.execute(text("PRAGMA integrity_check"))]
            journal = connection.execute(text("PRAGMA journal_mode")).scalar()
            tables = {
                row[0]
                for row in connection.execute(
                    text("SELECT name FROM sqlite_master WHERE type = 'table'")
                )
            }
    except HermesError as exc:
        engine.dispose()
        if "is damaged" in exc.message:
            yield Check(
                "database",
                "fail",
                f"{path} is damaged: {first_line(exc.__cause__ or exc)}",
                restore_fix(config, path),
            )
        else:
            yield Check(
                "database", "fail", exc.message, "Point HERMES_DATABASE_URL at a Hermes database."
            )
        return
    except SQLAlchemyError as exc:
        engine.dispose()
        yield Check(
            "database",
            "fail",
            f"{path} cannot be read: {first_line(exc)}",
            restore_fix(config, path),
        )
        return
    try:
        if integrity != ["ok"]:
            yield Check(
                "database",
                "fail",
                f"{path} is damaged: {'; '.join(integrity[:3])}",
                restore_fix(config, path),
            )
        elif current != head:
            yield Check(
                "database",
                "warn",
                f"schema at revision {current or 'none'}, the code expects {head}",
                "Run `hermes db upgrade` (it backs the database up first); Hermes also "
                "upgrades it on start.",
            )
        elif str(journal).lower() != "wal":
            yield Check(
                "database",
                "warn",
                f"journal mode is {journal}, not WAL",
                "Keep the database on a local disk (WAL needs shared memory; network "
                "filesystems lack it), then run hermes again.",
            )
        else:
            yield Check("database", "ok", f"{path} at revision {head}, WAL, integrity ok")
        yield _check_fts(engine, tables, write_transaction, text)
    finally:
        engine.dispose()


def restore_fix(config: Config, path) -> str:
    """What to do about a damaged database: the restore command, with what it will use."""
    from hermes.store.restore import newest_backup

    newest = newest_backup(config.backups_dir)
    if newest is None:
        return (
            f"There is no backup in {config.backups_dir}: move the file aside "
            f"(mv {path} {path}.broken) and Hermes starts a new one."
        )
    return (
        f"Run `hermes db restore`: it moves {path.name} aside and restores the newest copy "
        f"({newest.name}) from {config.backups_dir}."
    )


def _check_fts(engine, tables: set[str], write_transaction, text) -> Check:
    from sqlalchemy.exc import SQLAlchemyError

    missing = [name for name in FTS_TABLES if name not in tables]
    if missing:
        return Check(
            "search index",
            "fail",
            f"missing {', '.join(missing)}",
            "Run `hermes db upgrade` to create it.",
        )
    bad = []
    for name in FTS_TABLES:
        try:
            # Raises SQLITE_CORRUPT_VTAB when the index and its content table disagree;
            # rank 1 asks FTS5 to compare against the external content too.
            with write_transaction(engine) as connection:
                connection.execute(
                    text(f"INSERT INTO {name}({name}, rank) VALUES ('integrity-check', 1)")
                )
        except (SQLAlchemyError, StoreError) as exc:
            bad.append(f"{name}: {first_line(exc)}")
    if bad:
        return Check(
            "search index",
            "fail",
            "out of sync with the messages: " + "; ".join(bad),
            "Rebuild it: sqlite3 <db> \"INSERT INTO messages_fts(messages_fts) VALUES('rebuild'); "
            "INSERT INTO sessions_fts(sessions_fts) VALUES('rebuild');\"",
        )
    return Check("search index", "ok", "FTS5 index in sync with the messages")


def check_skills(config: Config) -> Check:
    from hermes.errors import SkillError
    from hermes.skills.schema import SKILL_FILE, parse_skill_md, validate_name

    root = config.skills_dir
    if not root.is_dir():
        return Check("skills", "ok", f"no skills yet ({root} is created with the first one)")
    good, bad = 0, []
    for folder in sorted(root.iterdir()):
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        try:
            validate_name(folder.name)
            if folder.is_symlink():
                raise SkillError("is a symlink")
            parse_skill_md(
                (folder / SKILL_FILE).read_text(encoding="utf-8"), folder_name=folder.name
            )
            good += 1
        except (SkillError, OSError, UnicodeDecodeError) as exc:
            reason = exc.message if isinstance(exc, SkillError) else first_line(exc)
            bad.append(f"{folder.name} ({reason})")
    if bad:
        return Check(
            "skills",
            "warn",
            f"{good} loaded, {len(bad)} skipped: {'; '.join(bad[:5])}"
            + (" …" if len(bad) > 5 else ""),
            f"Fix or delete those folders under {root}.",
        )
    return Check("skills", "ok", f"{good} skill{'s' if good != 1 else ''} in {root}")


def check_profile(config: Config) -> Iterator[Check]:
    from hermes.profile import FILES, ProfileMemory

    profile = ProfileMemory(
        config.memory_dir,
        user_limit=config.user_memory_limit,
        agent_limit=config.agent_memory_limit,
    )
    sizes = []
    full = []
    try:
        for target in ("user", "memory"):
            used, limit = profile.usage(target)
            sizes.append(f"{FILES[target]} {used:,}/{limit:,}")
            if used > 0.9 * limit:
                full.append(FILES[target])
        flagged = profile.flagged()
    except (OSError, UnicodeDecodeError) as exc:
        yield Check(
            "profile memory",
            "fail",
            f"cannot read {config.memory_dir}: {first_line(exc)}",
            "Make the files readable UTF-8 text, or move them away.",
        )
        return
    if flagged:
        target, entry, reason = flagged[0]
        yield Check(
            "profile memory",
            "warn",
            f"{len(flagged)} entr{'ies' if len(flagged) != 1 else 'y'} withheld from the model, "
            f"e.g. in {FILES[target]}: {entry[:60]!r} ({reason})",
            f"Review {config.memory_dir} and remove what you did not write.",
        )
    if full:
        yield Check(
            "profile memory",
            "warn",
            ", ".join(sizes) + " characters (nearly full)",
            f"Tidy {' and '.join(full)} in {config.memory_dir}: merge or drop old entries.",
        )
    elif not flagged:
        yield Check("profile memory", "ok", ", ".join(sizes) + " characters")


def first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
