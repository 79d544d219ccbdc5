"""The real ``hermes`` REPL in a pseudo-terminal, against the scripted fake model server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

from hermes.config import Config  # noqa: E402
from hermes.store import Store  # noqa: E402
from tests.helpers import repl_environ  # noqa: E402

TIMEOUT = 15
# Whitespace and styling escapes between two cells of a table.
GAP = r"(?:\x1b\[[0-9;?]*[A-Za-z]|\s)+"
PROMPT = "hermes>"  # prompt_toolkit draws the trailing space separately

SKILL_MD = """\
---
name: deploy-flask-app
description: Deploy a Flask app to Railway with gunicorn.
metadata:
  triggers: deploy, railway, flask
  version: "2"
  uses: "3"
---

1. Add `gunicorn` to requirements.txt.
2. Run `railway up`.
"""


@pytest.fixture
def repl_env(fake_llm, hermes_home: Path, workspace: Path) -> dict[str, str]:
    return repl_environ(fake_llm.env("openai"), hermes_home, workspace)


def spawn(env: dict[str, str], cwd: Path):
    child = pexpect.spawn(
        sys.executable,
        ["-m", "hermes"],
        env=env,
        cwd=str(cwd),
        dimensions=(40, 120),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    child.expect(r"hermes\S* — openai:\S+ — workspace ")
    child.expect("Type /help for commands")
    child.expect_exact(PROMPT)
    return child


def say(child, text: str) -> None:
    """Type a line and press Enter (a real terminal sends CR)."""
    child.send(text)
    child.send("\r")


def finish(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def open_store(hermes_home: Path, workspace: Path) -> Store:
    return Store.open(Config.from_env({"HERMES_HOME": str(hermes_home)}, dotenv=False))


def test_streamed_answer_tool_call_skills_memory_and_summary_on_ctrl_d(
    fake_llm, repl_env, hermes_home, workspace
):
    (workspace / "notes.txt").write_text("remember the railway volume\n")
    skill_dir = hermes_home / "skills" / "deploy-flask-app"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(SKILL_MD)
    fake_llm.reply("The capital of Peru is Lima, city of kings.", chunk_size=5)
    fake_llm.reply(tool_calls=[("list_dir", {"path": "."})])
    fake_llm.reply("Your workspace holds one file about railway.")
    fake_llm.reply("I told the user about Lima and listed their workspace.")

    child = spawn(repl_env, workspace)
    say(child, "What is the capital of Peru?")
    child.expect("city of kings")
    child.expect(r"\d+ in · \d+ out tokens")  # the usage line
    child.expect_exact(PROMPT)

    say(child, "What is in my workspace?")
    child.expect_exact("→ list_dir(path='.')")
    child.expect("notes.txt")  # the folded tool result
    child.expect("one file about railway")
    child.expect_exact(PROMPT)

    say(child, "/skills")
    child.expect(rf"deploy-flask-app{GAP}2{GAP}3{GAP}user")  # name, version, uses, by
    child.expect("Deploy a Flask app to Railway")
    child.expect_exact(PROMPT)

    child.send("/skill deploy-fl")
    child.send("\t")  # completes the skill name
    child.send("\r")
    child.expect("railway up")
    child.expect_exact(PROMPT)

    say(child, "/memory Lima")
    child.expect(r"#1")
    child.expect("What is the capital of Peru")  # the session title
    child.expect("assistant")
    child.expect("Lima")
    child.expect_exact(PROMPT)

    child.sendcontrol("d")
    child.expect("saving session summary")
    assert finish(child) == 0

    with open_store(hermes_home, workspace) as store:
        session = store.get_session(1)
        assert session.source == "cli"
        assert session.summary == "I told the user about Lima and listed their workspace."
        roles = [m.message.role for m in store.messages(1)]
        assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert fake_llm.pending == 0


def test_ctrl_c_cancels_a_slow_turn_and_the_repl_stays_alive(
    fake_llm, repl_env, hermes_home, workspace
):
    # Streams a few words, then goes silent long enough that only a cancel ends the wait.
    fake_llm.reply("Partial answer about volcanoes and more", chunk_size=8, stall=3, stall_after=3)
    fake_llm.reply("Yes, I am still here.")

    child = spawn(repl_env, workspace)
    say(child, "Tell me about volcanoes")
    child.expect("Partial")
    child.sendintr()
    child.expect("cancelled")
    child.expect_exact(PROMPT)

    say(child, "Are you still there?")
    child.expect("still here")
    child.expect_exact(PROMPT)

    # Ctrl-C at the prompt clears the line instead of quitting.
    child.send("half-typed")
    child.sendintr()
    child.expect_exact(PROMPT)
    say(child, "/model")  # still alive, and the half-typed text is gone
    child.expect(r"\n[^\n]*openai:gpt-4\.1")
    child.expect_exact(PROMPT)
    say(child, "/exit")
    child.expect("saving session summary")
    assert finish(child) == 0

    with open_store(hermes_home, workspace) as store:
        messages = [m.message for m in store.messages(1)]
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1].content.startswith("Partial")  # the partial answer was kept
    assert messages[3].content == "Yes, I am still here."


def test_session_commands_and_lazy_sessions(fake_llm, repl_env, hermes_home, workspace):
    fake_llm.reply("First answer about gardening.")
    fake_llm.reply("Second session answer.")

    child = spawn(repl_env, workspace)
    say(child, "/help")
    child.expect("/resume ID")
    child.expect("Alt-Enter")
    child.expect_exact(PROMPT)

    say(child, "/sesions")
    child.expect(r"Unknown command /sesions\. Did you mean /sessions\?")
    child.expect_exact(PROMPT)

    say(child, "/sessions")
    child.expect("No sessions yet")
    child.expect_exact(PROMPT)

    say(child, "/model")
    child.expect("openai:gpt-4.1")
    child.expect_exact(PROMPT)

    say(child, "How do I plant tomatoes?")
    child.expect("gardening")
    child.expect_exact(PROMPT)

    say(child, "/new")
    child.expect("saving session summary")  # one exchange: closed without a model call
    child.expect("New session")
    child.expect_exact(PROMPT)

    say(child, "/model gpt-4.1-mini")
    child.expect("Switched to openai:gpt-4.1-mini")
    child.expect_exact(PROMPT)

    say(child, "Another question")
    child.expect("Second session answer")
    child.expect_exact(PROMPT)
    assert fake_llm.last_request.json["model"] == "gpt-4.1-mini"

    say(child, "/sessions")
    child.expect(rf"\*2{GAP}Another question")
    child.expect(rf"1{GAP}How do I plant tomatoes\?")
    child.expect_exact(PROMPT)

    say(child, "/resume 1")
    child.expect(rf"Resumed{GAP}#1")
    child.expect("First answer about gardening")
    child.expect_exact(PROMPT)

    say(child, "/resume 99")
    child.expect("error: .*99")
    child.expect_exact(PROMPT)

    say(child, "/exit")
    assert finish(child) == 0


def test_opening_and_closing_creates_no_session(repl_env, hermes_home, workspace):
    child = spawn(repl_env, workspace)
    child.sendcontrol("d")
    assert finish(child) == 0
    with open_store(hermes_home, workspace) as store:
        assert store.list_sessions()[0] == []
    assert (hermes_home / "repl_history").exists()


def test_multiline_input_is_one_message(fake_llm, repl_env, hermes_home, workspace):
    fake_llm.reply("Got both lines.")
    child = spawn(repl_env, workspace)
    child.send("first line")
    child.send("\x1b\r")  # Alt-Enter: newline
    child.send("second line")
    child.sendcontrol("j")  # Ctrl-J: newline too
    child.send("third line\r")
    child.expect("Got both lines")
    child.expect_exact(PROMPT)
    # Bracketed paste: a pasted block with newlines stays one message.
    fake_llm.reply("Pasted fine.")
    child.send("\x1b[200~pasted one\rpasted two\x1b[201~\r")
    child.expect("Pasted fine")
    child.expect_exact(PROMPT)
    say(child, "/exit")
    assert finish(child) == 0

    sent = [r.json["messages"][-1]["content"] for r in fake_llm.requests if r.json]
    assert any("first line\nsecond line\nthird line" in str(c) for c in sent)
    assert any("pasted one\npasted two" in str(c) for c in sent)


def test_piped_input_reads_one_message_per_line(fake_llm, repl_env, hermes_home, workspace):
    fake_llm.reply("Piped answer here.")
    result = subprocess.run(
        [sys.executable, "-m", "hermes"],
        input="hello from a pipe\n/skills\n",
        env=repl_env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    assert "Piped answer here." in result.stdout
    assert "No skills yet" in result.stdout
    assert re.search(r"hermes — openai:gpt-4\.1 — workspace ", result.stdout)


def test_ctrl_c_while_a_tool_runs_in_a_narrow_terminal(fake_llm, repl_env, hermes_home, workspace):
    pidfile = workspace / "bash.pid"
    fake_llm.reply(tool_calls=[("run_bash", {"command": f"echo $$ > {pidfile}; sleep 20"})])
    fake_llm.reply("Back again.")
    env = dict(repl_env, COLUMNS="40", LINES="20")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "hermes"],
        env=env,
        cwd=str(workspace),
        dimensions=(20, 40),
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    child.expect("Type /help")
    child.expect_exact(PROMPT)
    say(child, "run the slow thing")
    child.expect_exact("→ run_bash(")
    while not pidfile.exists() or not pidfile.read_text().strip():
        child.expect([pexpect.TIMEOUT], timeout=0.05)
    child.sendintr()
    child.expect("cancelled")
    child.expect_exact(PROMPT)
    say(child, "hello again")
    child.expect("Back again")
    child.expect_exact(PROMPT)
    child.sendeof()
    assert finish(child) == 0

    with pytest.raises(ProcessLookupError):  # the command was stopped, not left running
        os.kill(int(pidfile.read_text()), 0)
    with open_store(hermes_home, workspace) as store:
        roles = [m.message.role for m in store.messages(1)]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    second = str(fake_llm.requests[1].json["messages"])
    assert "cancelled" in second  # the model is told what happened to its call


def test_the_curators_skill_is_shown_when_it_arrives_even_while_typing(
    fake_llm, repl_env, hermes_home, workspace
):
    fake_llm.reply(tool_calls=[("list_dir", {}), ("list_dir", {}), ("list_dir", {})])
    fake_llm.reply("Looked three times.")
    fake_llm.add(
        {
            "text": "NAME: look-around\nDESCRIPTION: List the workspace. Use when asked to look."
            "\nTRIGGERS: look\nBODY:\n1. List the workspace.\n",
            "delay": 3.0,  # the curator answers while the user is typing
        }
    )
    fake_llm.reply("Hello to you too.")

    child = spawn(repl_env, workspace)
    say(child, "look around thrice")
    child.expect("Looked three times.")
    child.expect_exact(PROMPT)  # done: the prompt is back before the curator is
    child.send("half")
    child.expect("learned a new skill: look-around", timeout=30)
    child.send(" typed")  # the line being typed survived the message drawn above it
    child.send("\r")
    child.expect("Hello to you too.")
    child.expect_exact(PROMPT)
    say(child, "/exit")
    assert finish(child) == 0
    # Requests: the answer's two calls, the curator's, then the typed message.
    assert fake_llm.requests[3].json["messages"][-1]["content"].endswith("half typed")
