"""`hermes doctor`: check the setup and say how to fix what is wrong.

Each check prints ``ok``, ``warn`` or ``fail`` with a one-line detail, and a
failing (or warning) check says what to do. The command exits non-zero when
any check fails. It never prints a secret: the API key is shown masked.
Checks are read-only, except that HERMES_HOME is created if missing (that is
where everything else lives) and a probe file is written and removed there.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import click
from rich.console import Console
from rich.text import Text

from hermes.config import KEY_VARIABLES, Config
from hermes.errors import HermesError, StoreError

Status = Literal["ok", "warn", "fail"]
PROBE_TIMEOUT = 5.0
FTS_TABLES = ("messages_fts", "sessions_fts")
ANTHROPIC_VERSION = "2023-06-01"
OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"


@dataclass(frozen=True)
class Check:
    """One check's verdict; ``fix`` says what to do when it is not ok."""

    name: str
    status: Status
    detail: str
    fix: str | None = None


class DoctorFailed(HermesError):
    """At least one check failed (each was already printed with its fix)."""


@click.command()
def doctor() -> None:
    """Check configuration, data folder, database, search index, skills and the provider."""
    console = Console(highlight=False)
    failed = 0
    for check in run_checks():
        show(console, check)
        failed += check.status == "fail"
    if failed:
        raise DoctorFailed(f"{failed} check{'s' if failed != 1 else ''} failed (see above).")
    console.print(Text("All checks passed.", style="green"))


STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red"}


def show(console: Console, check: Check) -> None:
    line = Text()
    line.append(f"{check.status:<5}", style=STATUS_STYLE[check.status])
    line.append(f" {check.name:<14} ", style="bold")
    line.append(check.detail)
    console.print(line)
    if check.fix and check.status != "ok":
        console.print(Text(f"{'':20}→ {check.fix}", style="dim"))


def run_checks(environ=None) -> Iterator[Check]:
    """Every check in order; later checks are skipped when the configuration is unusable."""
    try:
        config = Config.from_env(environ)
    except HermesError as exc:
        yield Check("configuration", "fail", exc.message, "Fix the variable named above.")
        return
    yield check_config(config)
    home_ok = check_home(config)
    yield home_ok
    if home_ok.status != "fail":
        # Everything below lives in HERMES_HOME: no point reading it when it is unusable.
        yield from check_database(config)
        yield check_skills(config)
        yield from check_profile(config)
    yield check_provider(config)


# -- the checks -----------------------------------------------------------------


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
    variable = KEY_VARIABLES[config.provider]
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
        detail += f", base URL {config.base_url}"
    if not config.workspace.is_dir():
        return Check(
            "configuration",
            "warn",
            detail + f"; workspace {config.workspace} does not exist",
            "Create it or set HERMES_WORKSPACE to an existing folder.",
        )
    return Check("configuration", "ok", detail)


def check_home(config: Config) -> Check:
    fix = f"Make {config.home} writable by you, or set HERMES_HOME to a folder you own."
    try:
        config.home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=config.home, prefix=".doctor-", delete=True) as f:
            f.write(b"ok")
            f.flush()
    except OSError as exc:
        return Check("data folder", "fail", f"{config.home} is not writable: {exc.strerror}", fix)
    return Check("data folder", "ok", f"{config.home} is writable")


def check_database(config: Config) -> Iterator[Check]:
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from hermes.store import migrate
    from hermes.store.engine import make_engine, read_transaction, sqlite_path, write_transaction

    try:
        path = sqlite_path(config.database_url)
    except HermesError as exc:
        yield Check("database", "fail", exc.message, "Fix DATABASE_URL.")
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
        yield Check("database", "fail", exc.message, "Point DATABASE_URL at a Hermes database.")
        return
    except SQLAlchemyError as exc:
        engine.dispose()
        yield Check(
            "database",
            "fail",
            f"{path} cannot be read: {_first_line(exc)}",
            f"Restore a copy from {config.backups_dir} or move the file away to start afresh.",
        )
        return
    try:
        if integrity != ["ok"]:
            yield Check(
                "database",
                "fail",
                f"{path} is damaged: {'; '.join(integrity[:3])}",
                f"Restore the newest copy from {config.backups_dir} (`hermes db backup` makes one).",
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
            bad.append(f"{name}: {_first_line(exc)}")
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
            reason = exc.message if isinstance(exc, SkillError) else _first_line(exc)
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
            f"cannot read {config.memory_dir}: {_first_line(exc)}",
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


def check_provider(config: Config) -> Check:
    """Reach the provider cheaply: list its models; if it has no such route, ask for 1 token."""
    import httpx

    if config.provider is None or not config.api_key:
        return Check("provider", "warn", "skipped: no provider configured", "See configuration.")
    if config.provider == "anthropic":
        base = (config.base_url or ANTHROPIC_DEFAULT_BASE).rstrip("/")
        url = f"{base}/v1/models"
        headers = {"x-api-key": config.api_key, "anthropic-version": ANTHROPIC_VERSION}
    else:
        base = (config.base_url or OPENAI_DEFAULT_BASE).rstrip("/")
        url = f"{base}/models"
        headers = {"Authorization": f"Bearer {config.api_key}"}
    variable = KEY_VARIABLES[config.provider]
    base_hint = (
        "the base URL (HERMES_BASE_URL, or the SDK's own *_BASE_URL)"
        if config.base_url
        else "your network connection"
    )
    try:
        response = httpx.get(url, headers=headers, timeout=PROBE_TIMEOUT)
    except httpx.TimeoutException:
        return Check(
            "provider",
            "fail",
            f"{base} did not answer within {PROBE_TIMEOUT:.0f} s",
            f"Check {base_hint} (is the server running and reachable?).",
        )
    except httpx.HTTPError as exc:
        return Check(
            "provider",
            "fail",
            f"cannot reach {base}: {_first_line(exc)}",
            f"Check {base_hint} (is the server running? is the URL right?).",
        )
    if response.status_code in (401, 403):
        return Check(
            "provider",
            "fail",
            f"{base} rejected the key {mask(config.api_key)} (HTTP {response.status_code})",
            f"Set {variable} to a valid key for {config.provider}.",
        )
    if response.status_code in (404, 405):
        # Some OpenAI-compatible servers have no model list; a 1-token answer proves it works.
        return _probe_completion(config, base)
    if response.status_code >= 400:
        return Check(
            "provider",
            "fail",
            f"{url} answered HTTP {response.status_code}",
            "Try again later; if it persists check the provider's status page or HERMES_BASE_URL.",
        )
    return _model_listed(config, base, response)


def _model_listed(config: Config, base: str, response) -> Check:
    try:
        listed = {str(item.get("id")) for item in response.json().get("data", [])}
    except (ValueError, AttributeError):
        listed = set()
    if listed and config.model not in listed:
        shown = ", ".join(sorted(listed)[:5])
        return Check(
            "provider",
            "warn",
            f"{base} is reachable, but does not list model {config.model!r} (it has: {shown}…)",
            "Set HERMES_MODEL to one of the listed models.",
        )
    return Check("provider", "ok", f"{base} is reachable and accepts the key")


def _probe_completion(config: Config, base: str) -> Check:
    from hermes.providers.registry import create_provider

    quick = config.with_overrides(max_retries=0, connect_timeout=PROBE_TIMEOUT, stream_timeout=10.0)
    try:
        create_provider(quick).complete("Reply with one word.", "ping", max_tokens=1)
    except HermesError as exc:
        status = getattr(exc, "status", None)
        if status in (401, 403):
            fix = f"Set {KEY_VARIABLES[config.provider]} to a valid key."
        else:
            fix = "Check HERMES_BASE_URL and HERMES_MODEL, and that the server is running."
        return Check("provider", "fail", f"{base}: {exc.message}", fix)
    return Check("provider", "ok", f"{base} answered a 1-token request")


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
