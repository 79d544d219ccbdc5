"""Everything under HERMES_HOME is private: files 0600, folders 0700, old homes fixed at start.

Driven through the real ``hermes`` command: a chat (database, log), a backup,
a REPL session (history), a skill import and profile memory.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from tests.helpers import clean_environ, run_hermes

pexpect = pytest.importorskip("pexpect")


def modes(home: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(home.stat().st_mode)}
    for path in home.rglob("*"):
        if not path.is_symlink():
            found[path.relative_to(home).as_posix()] = stat.S_IMODE(path.stat().st_mode)
    return found


def public(home: Path) -> dict[str, str]:
    """Whatever other users could read, write or enter."""
    return {name: oct(mode) for name, mode in modes(home).items() if mode & 0o077}


@pytest.fixture
def env(fake_llm, tmp_path: Path, workspace: Path) -> dict[str, str]:
    return clean_environ(
        **fake_llm.env("openai"),
        HERMES_HOME=str(tmp_path / "fresh-home"),
        HERMES_WORKSPACE=str(workspace),
        HERMES_MAX_RETRIES="0",
        TERM="xterm-256color",
        PROMPT_TOOLKIT_NO_CPR="1",
    )


def test_everything_hermes_creates_is_private(fake_llm, env, workspace, tmp_path):
    home = Path(env["HERMES_HOME"])
    os.umask(0o022)  # the usual umask: new files 0644, folders 0755
    fake_llm.reply(
        tool_calls=[("remember", {"action": "add", "target": "user", "text": "Prefers tea."})]
    )
    fake_llm.reply("Noted.")
    assert run_hermes(["chat", "-q", "I like tea"], env=env, cwd=workspace).returncode == 0
    assert run_hermes(["db", "backup"], env=env, cwd=workspace).returncode == 0
    skill = tmp_path / "src" / "brew"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: brew\ndescription: Brew tea.\n---\n\nSteps.\n")
    (skill / "scripts" / "brew.sh").write_text("echo brewing\n")
    (skill / "scripts" / "brew.sh").chmod(0o755)
    assert run_hermes(["skills", "import", str(skill)], env=env, cwd=workspace).returncode == 0

    child = pexpect.spawn(
        sys.executable, ["-m", "hermes"], env=env, cwd=str(workspace), encoding="utf-8", timeout=30
    )
    child.expect_exact("hermes>")
    child.send("/skills")
    child.send("\r")
    child.expect("brew")
    child.expect_exact("hermes>")
    child.sendeof()
    child.expect(pexpect.EOF)

    made = modes(home)
    for expected in ("hermes.db", "hermes.log", "repl_history", "backups", "skills/brew/SKILL.md"):
        assert expected in made, sorted(made)
    assert any(name.startswith("memory/") for name in made)
    assert public(home) == {}
    assert made["skills/brew/scripts/brew.sh"] == 0o700  # still runnable by its owner


def test_an_old_world_readable_home_is_fixed_at_start(env, workspace):
    home = Path(env["HERMES_HOME"])
    (home / "backups").mkdir(parents=True)
    (home / "memory").mkdir()
    (home / "skills" / "old").mkdir(parents=True)
    for name in ("hermes.db-wal", "backups/hermes-1.db", "memory/USER.md", ".env", "hermes.log"):
        (home / name).write_text("x")
    (home / "skills" / "old" / "SKILL.md").write_text("---\nname: old\ndescription: d\n---\n")
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (home / "hermes.db-wal").unlink()  # a stray -wal without its database would be replayed
    (home / "not-hermes.txt").write_text("someone else's")  # HERMES_HOME set to a shared folder
    (home / "not-hermes.txt").chmod(0o644)
    result = run_hermes(["sessions"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert public(home) == {"not-hermes.txt": "0o644"}  # only what Hermes keeps is changed
