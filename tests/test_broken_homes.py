"""Homes that are broken in the ways real ones break: unwritable, read-only, a damaged
database. Every case through the real ``hermes`` command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.config import Config
from hermes.messages import Message
from hermes.store import Store
from tests.helpers import clean_environ, run_hermes


@pytest.fixture
def env(hermes_home: Path, workspace: Path) -> dict[str, str]:
    return clean_environ(
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_PROVIDER="openai",
        HERMES_BASE_URL="http://127.0.0.1:9/v1",
        COLUMNS="200",
    )


def fill(hermes_home: Path) -> None:
    with Store.open(Config.from_env({"HERMES_HOME": str(hermes_home)}, dotenv=False)) as store:
        session = store.create_session(title="railway notes")
        store.add_message(session.id, Message(role="user", content="deploy to railway please"))


def damage(path: Path) -> None:
    for side in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        side.unlink(missing_ok=True)
    path.write_bytes(b"this is not an SQLite database, it was overwritten" * 100)


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs /sys")
def test_doctor_fails_a_home_that_cannot_be_created(workspace):
    result = run_hermes(
        ["doctor"],
        env=clean_environ(HERMES_HOME="/sys/hermes-home", HERMES_WORKSPACE=str(workspace)),
        cwd=workspace,
    )
    assert result.returncode == 1
    assert "fail  data folder" in result.stdout and "/sys/hermes-home cannot be created" in (
        " ".join(result.stdout.split())
    )
    assert "All checks passed" not in result.stdout


def test_a_damaged_database_names_cause_and_fix_and_restore_brings_it_back(
    env, hermes_home, workspace
):
    fill(hermes_home)
    backup = run_hermes(["db", "backup"], env=env, cwd=workspace)
    assert backup.returncode == 0, backup.stderr
    database = hermes_home / "hermes.db"
    damage(database)

    search = run_hermes(["search", "railway"], env=env, cwd=workspace)
    assert search.returncode == 1
    assert len(search.stderr.strip().splitlines()) == 1
    assert "is damaged (file is not a database)" in search.stderr
    assert "hermes db restore" in search.stderr and "Traceback" not in search.stderr

    doctor = " ".join(run_hermes(["doctor"], env=env, cwd=workspace).stdout.split())
    assert "fail database" in doctor
    assert f"restores the newest copy ({Path(backup.stdout.strip()).name})" in doctor

    restored = run_hermes(["db", "restore"], env=env, cwd=workspace)
    assert restored.returncode == 0, restored.stderr
    assert f"from {backup.stdout.strip()}" in restored.stdout
    [aside] = hermes_home.glob("hermes.db.broken-*")
    assert aside.read_bytes().startswith(b"this is not an SQLite database")
    found = run_hermes(["search", "railway"], env=env, cwd=workspace)
    assert found.returncode == 0 and "railway notes" in found.stdout


def test_restore_refuses_a_damaged_backup_and_changes_nothing(env, hermes_home, workspace):
    fill(hermes_home)
    bad = workspace / "bad.db"
    bad.write_bytes(b"garbage" * 500)
    before = (hermes_home / "hermes.db").read_bytes()
    result = run_hermes(["db", "restore", str(bad)], env=env, cwd=workspace)
    assert result.returncode == 1
    assert "failed its integrity check" in result.stderr and "nothing was changed" in result.stderr
    assert (hermes_home / "hermes.db").read_bytes() == before
    assert not list(hermes_home.glob("hermes.db.*"))
    none = run_hermes(["db", "restore"], env=env, cwd=workspace)
    assert none.returncode == 1 and "There is no backup in" in none.stderr


def test_the_repl_checks_the_database_before_the_first_message(env, hermes_home, workspace):
    pexpect = pytest.importorskip("pexpect")
    fill(hermes_home)
    damage(hermes_home / "hermes.db")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "hermes"],
        env=dict(env, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1"),
        cwd=str(workspace),
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=30,
    )
    child.expect("hermes db restore")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "hermes>" not in child.before


def run_in_read_only_home(home: Path, args: list[str], env: dict[str, str], cwd: Path):
    """Run hermes with ``home`` mounted read-only in a private mount namespace."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1)")
    namespace = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "-r", "-m"]
    script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    probe = subprocess.run([*namespace, "sh", "-c", script, str(home), "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here: {probe.stderr.decode().strip()}")
    return subprocess.run(
        [*namespace, "sh", "-c", script, str(home), sys.executable, "-m", "hermes", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_read_only_home_still_allows_search(env, hermes_home, workspace):
    fill(hermes_home)
    before = sorted(p.name for p in hermes_home.iterdir())
    result = run_in_read_only_home(hermes_home, ["search", "railway"], env, workspace)
    assert result.returncode == 0, result.stderr
    assert "railway notes" in result.stdout
    assert sorted(p.name for p in hermes_home.iterdir()) == before
    listed = run_in_read_only_home(hermes_home, ["sessions", "--json"], env, workspace)
    assert listed.returncode == 0, listed.stderr
    assert '"title": "railway notes"' in listed.stdout
