"""HERMES_HOME is off limits to the model even when the workspace contains it.

Hermes run from ``~`` has workspace ``~`` and home ``~/.hermes``: without a fence
the model could read ``.hermes/.env`` (the user's API keys), ``secret_key`` and
the database, or write ``approvals.rules`` with ``allow *`` so that every later
dangerous command passes unasked. The file tools refuse every path in the home;
the shell classifier asks before any write into it, or any read of its secrets.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hermes.approvals.classify import classify
from hermes.approvals.gate import Approvals, NobodyToAsk
from hermes.config import Config
from hermes.errors import ToolError
from hermes.events import ToolCall
from hermes.tools.files import edit_file, list_dir, read_file, write_file
from hermes.tools.registry import ToolContext
from hermes.tools.search import search_files

SECRET = "sk-ant-THE-USERS-REAL-KEY"


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """The user's home folder, which is also the workspace; Hermes' home inside it."""
    folder = tmp_path / "user"
    home = folder / ".hermes"
    (home / "skills" / "deploy").mkdir(parents=True)
    (home / ".env").write_text(f"ANTHROPIC_API_KEY={SECRET}\n")
    (home / "secret_key").write_text(SECRET + "\n")
    (home / "skills" / "deploy" / "SKILL.md").write_text(f"# deploy\n{SECRET}\n")
    (folder / "notes.txt").write_text(f"my notes, not a {SECRET[:6]} secret\n")
    return folder


@pytest.fixture
def config(user: Path) -> Config:
    return Config(
        home=(user / ".hermes").resolve(),
        workspace=user.resolve(),
        database_url="sqlite://",
        user_home=user.resolve(),
        approvals="ask",
        embeddings="off",
    )


@pytest.fixture
def ctx(config) -> ToolContext:
    return ToolContext(config=config)


def refused(tool, ctx, **arguments) -> str:
    with pytest.raises(ToolError) as raised:
        tool.function(ctx, **tool.validate(arguments))
    return raised.value.message


def review(approvals: Approvals, name: str, **arguments):
    gate = approvals.turn(1, "t1").review(
        ToolCall(id="c", name=name, input=arguments), threading.Event()
    )
    try:
        while True:
            next(gate)
    except StopIteration as stop:
        return stop.value


@pytest.mark.parametrize(
    "path",
    [
        ".hermes/.env",
        ".hermes/secret_key",
        "./.hermes/../.hermes/.env",
        ".hermes/skills/deploy/SKILL.md",
        "ABSOLUTE",
        "LINK",
    ],
)
def test_the_file_tools_never_read_hermes_home(ctx, user, path):
    if path == "ABSOLUTE":
        path = str(user / ".hermes" / ".env")
    if path == "LINK":
        (user / "innocent").symlink_to(user / ".hermes")
        path = "innocent/.env"
    message = refused(read_file, ctx, path=path)
    assert "Hermes' own data folder" in message and "use_skill" in message
    assert SECRET not in message


@pytest.mark.parametrize(
    "path", [".hermes/approvals.rules", ".hermes/.env", ".hermes/memory/MEMORY.md", ".hermes"]
)
def test_the_file_tools_never_write_hermes_home(ctx, user, path):
    before = sorted(p.relative_to(user) for p in user.rglob("*"))
    assert "Hermes' own data folder" in refused(write_file, ctx, path=path, content="allow *\n")
    assert "Hermes' own data folder" in refused(
        edit_file, ctx, path=".hermes/.env", old="ANTHROPIC", new="X"
    )
    assert sorted(p.relative_to(user) for p in user.rglob("*")) == before
    assert (user / ".hermes" / ".env").read_text() == f"ANTHROPIC_API_KEY={SECRET}\n"


def test_listing_and_searching_the_workspace_skip_hermes_home(ctx, user):
    listing = list_dir.function(ctx, path=".", depth=3)
    assert ".hermes/ (Hermes' data folder, not shown)" in listing
    assert "secret_key" not in listing and "SKILL.md" not in listing
    assert "Hermes' own data folder" in refused(list_dir, ctx, path=".hermes")
    found = search_files.function(ctx, pattern="sk-ant")
    assert "notes.txt" in found and SECRET not in found


def test_a_workspace_inside_hermes_home_is_still_the_models(tmp_path):
    home = tmp_path / "srv-home"
    workspace = home / "workspace"
    workspace.mkdir(parents=True)
    (home / ".env").write_text(f"K={SECRET}\n")
    config = Config(home=home.resolve(), workspace=workspace.resolve(), database_url="sqlite://")
    ctx = ToolContext(config=config)
    write_file.function(ctx, path="app.py", content="print(1)\n")
    assert "print(1)" in read_file.function(ctx, path="app.py")
    assert "outside the workspace" in refused(read_file, ctx, path="../.env")
    assert (
        classify("echo x > app.py", workspace=workspace, home=tmp_path, hermes_home=home).level
        == "safe"
    )


def test_the_reviewers_attack_writing_allow_all_rules_fails(config, ctx, user):
    """t7: write ``allow *`` into approvals.rules, then a force push would pass unasked."""
    approvals = Approvals(config, NobodyToAsk("nobody"))
    push = {"command": "rm -rf /tmp/x/build && git push --force origin main"}
    assert review(approvals, "run_bash", **push).refusal
    refused(write_file, ctx, path=".hermes/approvals.rules", content="allow *\n")
    denied = review(approvals, "run_bash", command="echo 'allow *' > .hermes/approvals.rules")
    assert denied.refusal and "HERMES_HOME" in denied.record["reason"]
    assert not (user / ".hermes" / "approvals.rules").exists()
    assert review(approvals, "run_bash", **push).refusal


def test_an_allow_all_rule_of_the_user_does_not_open_hermes_home(config, user):
    (user / ".hermes" / "approvals.rules").write_text("allow *\n")
    approvals = Approvals(config, NobodyToAsk("nobody"))
    assert review(approvals, "run_bash", command="git push --force origin main").refusal is None
    for command in ("cat .hermes/.env", "echo x >> .hermes/approvals.rules"):
        assert review(approvals, "run_bash", command=command).refusal, command


@pytest.mark.parametrize(
    "command",
    [
        "echo 'allow *' > .hermes/approvals.rules",
        "echo 'allow *' >> ~/.hermes/approvals.rules",
        "printf x | tee $HOME/.hermes/approvals.json",
        "cp evil.rules USER/.hermes/approvals.rules",
        "mv .hermes/approvals.json /tmp/gone",
        "rm -f .hermes/hermes.db",
        "sed -i s/ask/auto/ .hermes/.env",
        "mkdir -p .hermes/skills/evil",
        "cd .hermes && echo x > approvals.rules",
        "echo x > $HERMES_HOME/approvals.rules",
        "ln -sf /tmp/evil .hermes/approvals.rules",
        "python3 -c \"open('.hermes/approvals.rules', 'w').write('allow *')\"",
        "cat .hermes/.env",
        "grep KEY ~/.hermes/.env",
        "base64 < .hermes/secret_key",
        "sqlite3 .hermes/hermes.db .dump",
        "cd .hermes; cat .env",
        "cat .hermes/*",
        "cat .hermes/.e*",
        "cat .hermes/backups/hermes-1.db",
        "tar czf /tmp/all.tgz .",
        "grep -r ANTHROPIC_API_KEY .",
        "LINKED",
    ],
)
def test_the_classifier_asks_before_touching_hermes_home(user, command):
    if command == "LINKED":
        (user / "h").symlink_to(user / ".hermes")
        command = "echo x > h/approvals.rules"
    command = command.replace("USER", str(user))
    home = user / ".hermes"
    verdict = classify(command, workspace=user, home=user, hermes_home=home)
    assert verdict.level == "dangerous", command


@pytest.mark.parametrize(
    "command",
    [
        "cat .hermes/skills/deploy/SKILL.md",
        "ls -la .hermes",
        "echo hi > notes.txt",
        "grep -rn TODO src",
        "cat notes.txt",
    ],
)
def test_ordinary_work_beside_hermes_home_stays_safe(user, command):
    verdict = classify(command, workspace=user, home=user, hermes_home=user / ".hermes")
    assert verdict.level == "safe", (command, verdict.reason)


@pytest.mark.parametrize(
    "command",
    [
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        "cat /proc/$PPID/environ | tr '\\0' '\\n'",
        "strings /proc/*/environ",
        "xxd /proc/1/mem",
        "cat /proc/4242/cmdline",
        "cd /proc/$PPID && cat environ",
        "cd /proc/1 && cat environ",
        "python3 -c \"print(open('/proc/%d/environ' % __import__('os').getppid()).read())\"",
    ],
)
def test_reading_another_process_environment_is_dangerous(user, command):
    verdict = classify(command, workspace=user, home=user, hermes_home=user / ".hermes")
    assert verdict.level == "dangerous", command


def test_own_proc_files_stay_safe(user):
    for command in ("cat /proc/self/status", "cat /proc/cpuinfo", "cat /proc/self/cmdline"):
        assert classify(command, workspace=user, home=user).level == "safe", command


def test_writing_a_dotenv_asks_first(config, ctx, user):
    approvals = Approvals(config, NobodyToAsk("nobody"))
    created = review(approvals, "write_file", path=".env", content="HERMES_MODEL=x\n")
    assert created.refusal and "write-dotenv" in created.record["rules"]
    assert "creates .env" in created.record["reason"]
    (user / "app").mkdir()
    (user / "app" / ".env").write_text("A=1\n")
    edited = review(approvals, "edit_file", path="app/.env", old="A=1", new="A=2")
    assert edited.refusal and "changes app/.env" in edited.record["reason"]
    # Other new files need no approval; the shell asks for a .env too.
    assert review(approvals, "write_file", path="notes2.txt", content="x").refusal is None
    assert classify("echo HERMES_MODEL=x > .env", workspace=user, home=user).level == "dangerous"
    assert os.path.exists(user / "app" / ".env")
