"""Lists at 80 columns: ids, counts and dates always show; long text is cut with "…".

Driven through the real ``hermes`` command in a pseudo-terminal, as a user
sees it, and through ``hermes sessions --json`` for scripts.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from hermes.config import Config
from hermes.messages import Message
from hermes.store import Store
from tests.helpers import clean_environ, run_hermes

pexpect = pytest.importorskip("pexpect")

LONG_TITLE = "How do I configure nginx as a reverse proxy for several Flask apps " * 2
LONG_SUMMARY = "The user set up nginx with three upstream blocks and TLS from certbot. " * 3
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


@pytest.fixture
def env(hermes_home: Path, workspace: Path) -> dict[str, str]:
    return clean_environ(
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_PROVIDER="openai",
        HERMES_BASE_URL="http://127.0.0.1:9/v1",
        TERM="xterm-256color",
        PROMPT_TOOLKIT_NO_CPR="1",
    )


def fill_sessions(hermes_home: Path, count: int = 3) -> list[int]:
    config = Config.from_env({"HERMES_HOME": str(hermes_home)}, dotenv=False)
    ids = []
    with Store.open(config) as store:
        for n in range(count):
            info = store.create_session(title=f"{LONG_TITLE} #{n}")
            store.add_message(info.id, Message(role="user", content="question"))
            store.add_message(info.id, Message(role="assistant", content="answer"))
            store.update_session(info.id, summary=LONG_SUMMARY)
            ids.append(info.id)
    return ids


def screen_lines(text: str) -> list[str]:
    return [line for line in ANSI.sub("", text).split("\n") if line.strip()]


def run_in_pty(args: list[str], env: dict[str, str], cwd: Path, columns: int = 80) -> str:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "hermes", *args],
        env=dict(env, COLUMNS=str(columns), LINES="40"),
        cwd=str(cwd),
        dimensions=(40, columns),
        encoding="utf-8",
        timeout=30,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return child.before


def test_hermes_sessions_at_80_columns_shows_every_id_count_and_date(env, hermes_home, workspace):
    ids = fill_sessions(hermes_home)
    lines = screen_lines(run_in_pty(["sessions"], env, workspace))
    assert all(len(line) <= 80 for line in lines), lines
    header, *rows = lines
    assert header.split()[:1] == ["id"] and "summary" in header
    assert len(rows) == len(ids)
    for session_id, row in zip(sorted(ids, reverse=True), rows, strict=True):
        assert re.match(rf"\s*{session_id}\s+How do I", row), row
        assert re.search(r"\s2\s+\d{4}-\d\d-\d\d \d\d:\d\d\s", row), row  # count and date whole
        assert "…" in row  # long title / summary cut, not wrapped


def test_hermes_sessions_limit_and_json(env, hermes_home, workspace):
    ids = fill_sessions(hermes_home, count=3)
    result = run_hermes(["sessions", "--limit", "2", "--json"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)
    assert [item["id"] for item in items] == sorted(ids, reverse=True)[:2]
    assert set(items[0]) == {
        "id",
        "title",
        "source",
        "created_at",
        "updated_at",
        "message_count",
        "summary",
        "usage",
    }
    assert set(items[0]["usage"]) >= {"input_tokens", "output_tokens", "cost_usd"}
    assert items[0]["message_count"] == 2 and items[0]["summary"] == LONG_SUMMARY
    assert items[0]["updated_at"].endswith("Z")


def command(child, line: str, header: str) -> str:
    """Type a slash command; return what it printed (from its table header to the prompt)."""
    child.send(line)
    child.send("\r")
    child.expect(header)
    printed = child.after
    child.expect_exact("hermes>")
    return printed + child.before


def test_repl_sessions_and_skills_fit_80_columns(env, hermes_home, workspace):
    ids = fill_sessions(hermes_home)
    skill = hermes_home / "skills" / "nginx-reverse-proxy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: nginx-reverse-proxy\ndescription: "
        + "Put nginx in front of several apps with TLS and upstream health checks. " * 3
        + "\nmetadata:\n  version: '12'\n  uses: '345'\n---\n\nSteps.\n"
    )
    child = pexpect.spawn(
        sys.executable,
        ["-m", "hermes"],
        env=dict(env, COLUMNS="80", LINES="40"),
        cwd=str(workspace),
        dimensions=(40, 80),
        encoding="utf-8",
        timeout=30,
    )
    child.expect_exact("hermes>")
    sessions_screen = screen_lines(command(child, "/sessions", "summary"))
    skills_screen = screen_lines(command(child, "/skills", "description"))
    child.send("/exit")
    child.send("\r")
    child.expect(pexpect.EOF)

    rows = [line for line in sessions_screen if re.match(r"\s*\d+\s+How do I", line)]
    assert sorted(int(row.split()[0]) for row in rows) == sorted(ids)
    assert all(len(line) <= 80 for line in rows), rows
    [skill_row] = [line for line in skills_screen if "nginx-reverse-proxy" in line]
    assert len(skill_row) <= 80
    assert re.search(r"nginx-reverse-proxy\s+12\s+345\s", skill_row), skill_row
    assert skill_row.rstrip().endswith("…")


def test_skills_list_at_80_columns(env, hermes_home, workspace):
    skill = hermes_home / "skills" / "pdf"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: "
        + "Fill PDF forms and extract their tables. " * 6
        + "\n---\n"
    )
    lines = screen_lines(run_in_pty(["skills", "list"], env, workspace))
    [row] = [line for line in lines if line.startswith("pdf")]
    assert len(row) <= 80 and row.rstrip().endswith("…")
    assert re.match(r"pdf\s+1\s+0\s+user\s+Fill PDF", row), row
