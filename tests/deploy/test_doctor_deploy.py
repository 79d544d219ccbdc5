"""`hermes doctor`'s deployment checks, one verdict each, with a fix when they fail."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hermes.cli.doctor_deploy import (
    app_root,
    check_backups,
    check_password,
    check_ratelimit_storage,
    check_web_secrets,
    check_workspace,
    deployment_checks,
)
from hermes.store.backups import DAILY_PREFIX
from hermes.store.store import Store
from tests.helpers import clean_environ, run_hermes

KEY = "s" * 48


def test_no_web_secrets_is_fine_for_local_use(make_config):
    check = check_web_secrets(make_config())
    assert check.status == "ok" and "hermes web" in check.detail


def test_short_or_missing_secret_key_fails(make_config):
    short = check_web_secrets(make_config(secret_key="abc", web_password="x" * 20))
    assert (
        short.status == "fail" and "3 characters" in short.detail and "token_urlsafe" in short.fix
    )
    medium = check_web_secrets(make_config(secret_key="m" * 20, web_password="x" * 20))
    assert medium.status == "warn" and "32+" in medium.detail
    missing = check_web_secrets(make_config(web_password="x" * 20))
    assert missing.status == "fail"
    assert check_web_secrets(make_config(secret_key=KEY)).status == "ok"


def test_password_strength(make_config):
    def verdict(password, **extra):
        return check_password(make_config(secret_key=KEY, web_password=password, **extra)).status

    assert verdict("password123") == "fail"
    assert verdict("aaaaaaaaaaaaaaaa") == "fail"
    assert verdict("Tr0ub4") == "fail"
    assert verdict("Tr0ub4dor&3") == "warn"
    assert verdict("correct horse battery staple") == "ok"
    assert verdict(None) == "fail"
    assert verdict(None, web_allow_no_auth=True) == "warn"


def test_password_is_never_printed(make_config):
    secret = "correct horse battery staple"
    for check in deployment_checks(make_config(secret_key=KEY, web_password=secret), {}):
        assert secret not in check.detail + (check.fix or "")
        assert KEY not in check.detail + (check.fix or "")


def test_workspace_inside_the_app_code_fails_on_a_server(make_config):
    code = app_root()
    assert code is not None  # the tests run from a checkout
    server = check_workspace(make_config(workspace=code, secret_key=KEY, web_password="x" * 20))
    assert server.status == "fail" and "own code" in server.detail
    laptop = check_workspace(make_config(workspace=code / "hermes"))
    assert laptop.status == "warn"


def test_workspace_holding_the_database_fails(make_config, hermes_home):
    check = check_workspace(make_config(workspace=hermes_home))
    assert check.status == "fail" and "database" in check.detail


def test_workspace_apart_is_ok(make_config):
    assert check_workspace(make_config()).status == "ok"


def test_backup_age(make_config):
    config = make_config()
    assert check_backups(config).detail == "no database yet"
    Store.open(config).close()
    assert check_backups(config).status == "warn"  # none yet
    config.backups_dir.mkdir()
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    stamp = (now - timedelta(hours=5)).strftime("%Y%m%d-%H%M%S")
    (config.backups_dir / f"{DAILY_PREFIX}{stamp}-000000.db").write_bytes(b"")
    fresh = check_backups(config, now=now)
    assert fresh.status == "ok" and "5 h old" in fresh.detail
    stale = check_backups(config, now=now + timedelta(days=5))
    assert stale.status == "warn" and "hermes db backup" in stale.fix
    assert check_backups(make_config(backup_days=0), now=now).status == "warn"


def test_ratelimit_storage_that_does_not_answer_fails_without_showing_its_password(make_config):
    config = make_config(ratelimit_storage="redis://user:hunter2@127.0.0.1:1/0")
    check = check_ratelimit_storage(config)
    assert check.status == "fail"
    assert "hunter2" not in check.detail and "•••" in check.detail
    assert check_ratelimit_storage(make_config(ratelimit_storage="memory://")).status == "ok"
    bogus = check_ratelimit_storage(make_config(ratelimit_storage="nosuch://x"))
    assert bogus.status == "fail"


def test_doctor_command_shows_the_deployment_checks(tmp_path, workspace):
    env = clean_environ(
        HERMES_HOME=str(tmp_path / "home"),
        HERMES_WORKSPACE=str(workspace),
        FLASK_SECRET_KEY="k3y-0f-9",
        HERMES_WEB_PASSWORD="letmein",
    )
    result = run_hermes(["doctor"], env=env, cwd=Path(workspace))
    assert result.returncode != 0
    out = result.stdout
    assert "web secrets" in out and "8 characters" in out
    assert "web password" in out and "guessed first" in out
    assert "persistence" in out and "workspace" in out and "backups" in out
    assert "letmein" not in out + result.stderr
    assert "k3y-0f-9" not in out + result.stderr
