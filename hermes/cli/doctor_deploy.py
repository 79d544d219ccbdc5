"""The checks of `hermes doctor` that matter on a server: secrets, storage, backups.

They run on every `hermes doctor`; on a laptop where no web secret is set the
secret checks say so in one line and pass, since `hermes web` makes its own.
Like the other checks they read and never write (the one exception, the
rate-limit storage probe, writes nothing that outlives a minute).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hermes.cli.doctor_checks import Check
from hermes.config import Config
from hermes.deploy import GOOD_SECRET_KEY_LENGTH, MIN_SECRET_KEY_LENGTH, storage_warnings

MIN_PASSWORD_LENGTH = 12
BACKUP_MAX_AGE = timedelta(days=2)
# The passwords every scanner tries first; any of them is as good as none.
COMMON_PASSWORDS = {
    "password", "password1", "password123", "123456", "12345678", "123456789", "1234567890",
    "qwerty", "qwerty123", "letmein", "admin", "admin123", "welcome", "changeme", "hermes",
    "iloveyou", "monkey", "dragon", "secret", "passw0rd", "abc123", "111111", "000000",
}  # fmt: skip
SECRET_FIX = (
    'Set FLASK_SECRET_KEY to the output of `python3 -c "import secrets; '
    'print(secrets.token_urlsafe(48))"` and restart.'
)


def deployment_checks(config: Config, environ=None) -> Iterator[Check]:
    yield check_web_secrets(config)
    if config.web_password or config.secret_key:
        yield check_password(config)
    yield check_persistence(config, environ)
    yield check_workspace(config)
    yield check_backups(config)
    if config.ratelimit_storage != "memory://":
        yield check_ratelimit_storage(config)


def check_web_secrets(config: Config) -> Check:
    if not config.secret_key and not config.web_password:
        return Check(
            "web secrets",
            "ok",
            "not set (fine for `hermes web`, which makes its own key; a server needs "
            "FLASK_SECRET_KEY and HERMES_WEB_PASSWORD)",
        )
    if not config.secret_key:
        return Check("web secrets", "fail", "FLASK_SECRET_KEY is not set", SECRET_FIX)
    length = len(config.secret_key)
    if length < MIN_SECRET_KEY_LENGTH:
        return Check(
            "web secrets",
            "fail",
            f"FLASK_SECRET_KEY is {length} characters; the dashboard refuses fewer than "
            f"{MIN_SECRET_KEY_LENGTH}",
            SECRET_FIX,
        )
    if length < GOOD_SECRET_KEY_LENGTH:
        return Check(
            "web secrets",
            "warn",
            f"FLASK_SECRET_KEY is {length} characters; {GOOD_SECRET_KEY_LENGTH}+ random "
            "characters keep login cookies from being guessed",
            SECRET_FIX,
        )
    return Check("web secrets", "ok", f"FLASK_SECRET_KEY set ({len(config.secret_key)} characters)")


def check_password(config: Config) -> Check:
    name = "web password"
    fix = (
        f"Set HERMES_WEB_PASSWORD to a passphrase of {MIN_PASSWORD_LENGTH}+ characters "
        "(four random words will do)."
    )
    password = config.web_password
    if not password:
        if config.web_allow_no_auth:
            return Check(
                name,
                "warn",
                "HERMES_WEB_ALLOW_NO_AUTH=true: anyone who reaches the port can use the agent",
                "Only on a private network; set HERMES_WEB_PASSWORD otherwise.",
            )
        return Check(name, "fail", "HERMES_WEB_PASSWORD is not set: the server will not start", fix)
    if password.lower() in COMMON_PASSWORDS or len(set(password)) <= 2:
        return Check(name, "fail", "the password is one that is guessed first", fix)
    if len(password) < 8:
        return Check(name, "fail", f"the password has only {len(password)} characters", fix)
    if len(password) < MIN_PASSWORD_LENGTH:
        return Check(name, "warn", f"the password has only {len(password)} characters", fix)
    return Check(name, "ok", f"set ({len(password)} characters; logins lock after 5 failures)")


def check_persistence(config: Config, environ=None) -> Check:
    warnings = storage_warnings(config, environ)
    if warnings:
        return Check("persistence", "warn", warnings[0], "Put HERMES_HOME on a volume or a disk.")
    return Check("persistence", "ok", f"{config.home} is not on a throwaway filesystem")


def check_workspace(config: Config) -> Check:
    """The agent's tools must not reach the app's own code or Hermes' database."""
    workspace = config.workspace
    code = app_root()
    fix = "Set HERMES_WORKSPACE to an empty folder of its own (e.g. $HERMES_HOME/workspace)."
    if code is not None and (workspace == code or code in workspace.parents):
        return Check(
            "workspace",
            "fail" if _is_server(config) else "warn",
            f"{workspace} is inside Hermes' own code ({code}): the agent can edit the app "
            "it runs in",
            fix,
        )
    if code is not None and workspace in code.parents:
        return Check(
            "workspace",
            "warn",
            f"{workspace} contains Hermes' own code ({code})",
            fix,
        )
    database = _database_file(config)
    if database is not None and workspace in database.parents:
        return Check(
            "workspace",
            "fail",
            f"{workspace} contains Hermes' database ({database}): a shell command in the "
            "workspace could damage every session",
            fix,
        )
    return Check("workspace", "ok", f"{workspace} (apart from the code and the database)")


def check_backups(config: Config, now: datetime | None = None) -> Check:
    from hermes.store.backups import backup_time, newest_backup

    database = _database_file(config)
    if database is None or not database.exists():
        return Check("backups", "ok", "no database yet")
    newest = newest_backup(config.backups_dir)
    fix = (
        "Run `hermes db backup` (the dashboard also takes one a day; HERMES_BACKUP_DAYS "
        "keeps them that many days)."
    )
    if config.backup_days == 0:
        return Check("backups", "warn", "daily backups are off (HERMES_BACKUP_DAYS=0)", fix)
    if newest is None:
        return Check("backups", "warn", f"no backup in {config.backups_dir} yet", fix)
    age = (now or datetime.now(UTC)) - backup_time(newest)
    detail = f"newest {newest.name}, {_age(age)} old"
    if age > BACKUP_MAX_AGE:
        return Check("backups", "warn", detail, fix)
    return Check("backups", "ok", detail)


def check_ratelimit_storage(config: Config) -> Check:
    """HERMES_RATELIMIT_STORAGE answers (the login lockout lives there)."""
    uri = config.ratelimit_storage
    shown = _hide_password(uri)
    fix = "Start that server or fix HERMES_RATELIMIT_STORAGE (memory:// works for one process)."
    try:
        from limits.storage import storage_from_string

        storage = storage_from_string(uri)
        reachable = storage.check()
    except Exception as exc:  # a bad scheme, a missing driver, a refused connection
        return Check("rate limits", "fail", f"{shown}: {type(exc).__name__}: {exc}"[:300], fix)
    if not reachable:
        return Check("rate limits", "fail", f"{shown} does not answer", fix)
    return Check("rate limits", "ok", f"{shown} answers")


def app_root() -> Path | None:
    """The source checkout Hermes runs from (the folder with wsgi.py), if it is one."""
    import hermes

    root = Path(hermes.__file__).resolve().parent.parent
    if (root / "wsgi.py").is_file() or (root / "pyproject.toml").is_file():
        return root
    return None


def _is_server(config: Config) -> bool:
    return bool(config.secret_key or config.web_password)


def _database_file(config: Config) -> Path | None:
    from hermes.errors import HermesError
    from hermes.store.engine import sqlite_path

    try:
        return sqlite_path(config.database_url).resolve()
    except HermesError:
        return None


def _age(age: timedelta) -> str:
    hours = age.total_seconds() / 3600
    if hours < 1:
        return f"{max(int(age.total_seconds() // 60), 0)} min"
    if hours < 48:
        return f"{hours:.0f} h"
    return f"{hours / 24:.0f} days"


def _hide_password(uri: str) -> str:
    """redis://user:secret@host -> redis://user:•••@host."""
    scheme, sep, rest = uri.partition("://")
    if not sep or "@" not in rest:
        return uri
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:•••@{host}"
