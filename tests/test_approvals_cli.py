"""Approvals where a user meets them: the REPL in a pty, `hermes chat -q`, `hermes approvals`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import repl_environ
from tests.helpers import run_hermes as hermes

pexpect = pytest.importorskip("pexpect")

TIMEOUT = 20
PROMPT = "hermes>"


@pytest.fixture
def env(fake_llm, hermes_home: Path, workspace: Path) -> dict[str, str]:
    return repl_environ(fake_llm.env("openai"), hermes_home, workspace)


def spawn(env, cwd: Path):
    child = pexpect.spawn(
        sys.executable,
        ["-m", "hermes"],
        env=env,
        cwd=str(cwd),
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    child.expect("Type /help for commands")
    child.expect_exact(PROMPT)
    return child


def say(child, text: str) -> None:
    child.send(text)
    child.send("\r")


def test_repl_asks_inline_once_session_always_and_deny(fake_llm, env, workspace, hermes_home):
    for name in ("one", "two", "three", "four"):
        (workspace / name).mkdir()
    # once
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -rf one && echo removed-one"})])
    fake_llm.reply("Removed one.")
    # session, then the same rule again without asking
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -r two"})])
    fake_llm.reply("Removed two.")
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -r three"})])
    fake_llm.reply("Removed three.")
    # deny
    fake_llm.reply(tool_calls=[("run_bash", {"command": "git push --force origin main"})])
    fake_llm.reply("I did not push.")
    # always
    fake_llm.reply(tool_calls=[("run_bash", {"command": "git reset --hard"})])
    fake_llm.reply("Reset done.")

    child = spawn(env, workspace)
    say(child, "remove one")
    child.expect_exact("run_bash needs your approval: deletes folders recursively")
    child.expect_exact("rm -rf one && echo removed-one")
    child.expect_exact("[o] once  [s] this session  [a] always  [d] deny")
    child.send("o")
    child.expect_exact("approved once")
    child.expect("removed-one")
    child.expect("Removed one.")
    child.expect_exact(PROMPT)
    assert not (workspace / "one").exists()

    say(child, "remove two")
    child.expect_exact("needs your approval")
    child.send("s")
    child.expect_exact("approved for the rest of this session")
    child.expect("Removed two.")
    child.expect_exact(PROMPT)

    say(child, "remove three")
    child.expect_exact("approved by your earlier decision for this session")
    child.expect("Removed three.")
    child.expect_exact(PROMPT)
    assert not (workspace / "three").exists()

    say(child, "push it")
    child.expect_exact("force push")
    child.send("d")
    child.expect_exact("denied")
    child.expect("I did not push.")
    child.expect_exact(PROMPT)
    assert "denied by the user" in json.dumps(fake_llm.requests[-1].json["messages"])

    say(child, "reset")
    child.expect_exact("throws away uncommitted changes")
    child.send("a")
    child.expect_exact("approved always")
    child.expect("Reset done.")
    child.expect_exact(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)

    saved = json.loads((hermes_home / "approvals.json").read_text())
    assert [g["rule"] for g in saved["always"]] == ["git-reset-hard"]
    listed = hermes(["approvals", "list"], env=env, cwd=workspace)
    assert listed.returncode == 0 and "git-reset-hard" in listed.stdout
    revoked = hermes(["approvals", "revoke", "git-reset-hard"], env=env, cwd=workspace)
    assert revoked.returncode == 0 and "revoked: git-reset-hard" in revoked.stdout
    assert json.loads((hermes_home / "approvals.json").read_text())["always"] == []
    again = hermes(["approvals", "revoke", "git-reset-hard"], env=env, cwd=workspace)
    assert again.returncode == 1 and "is not approved always" in again.stderr


def test_repl_question_times_out_as_a_denial(fake_llm, env, workspace):
    (workspace / "keep").mkdir()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -rf keep"})])
    fake_llm.reply("Left it alone.")
    child = spawn(dict(env, HERMES_APPROVAL_TIMEOUT="1.5"), workspace)
    say(child, "clean up")
    child.expect_exact("(no answer in 1.5 s denies)")
    child.expect_exact("no answer within 1.5 s: denied")
    child.expect("Left it alone.")
    child.expect_exact(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    assert (workspace / "keep").is_dir()
    assert "nobody approved it" in json.dumps(fake_llm.requests[-1].json["messages"])


def test_chat_q_denies_dangerous_commands_unless_yes(fake_llm, env, workspace):
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch made && rm -rf made"})])
    fake_llm.reply("I could not.")
    denied = hermes(["chat", "-q", "do it"], env=env, cwd=workspace)
    assert denied.returncode == 0, denied.stderr
    assert not (workspace / "made").exists() and "I could not." in denied.stdout
    told = json.dumps(fake_llm.requests[-1].json["messages"])
    assert "nobody to ask" in told and "--yes" in told

    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch made && rm -rf made && echo ok"})])
    fake_llm.reply("Done.")
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch bad; rm -rf /"})])
    fake_llm.reply("Refused.")
    approved = hermes(["chat", "-q", "do it", "--yes", "--json"], env=env, cwd=workspace)
    assert approved.returncode == 0, approved.stderr
    result = next(
        json.loads(line) for line in approved.stdout.splitlines() if '"tool_result"' in line
    )
    assert result["output"].startswith("ok") and result["approval"]["decision"] == "auto"
    forbidden = hermes(["chat", "-q", "wipe", "--yes"], env=env, cwd=workspace)
    assert forbidden.returncode == 0, forbidden.stderr
    assert not (workspace / "bad").exists(), "forbidden commands never run, --yes or not"
    assert "refused: forbidden" in forbidden.stderr


def test_an_unknown_mode_is_a_one_line_error(env, workspace):
    result = hermes(
        ["approvals", "list"], env=dict(env, HERMES_APPROVALS="sometimes"), cwd=workspace
    )
    assert result.returncode != 0
    assert "HERMES_APPROVALS must be one of ask, auto, deny" in result.stderr
    assert "Traceback" not in result.stderr
