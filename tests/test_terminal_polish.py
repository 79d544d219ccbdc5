"""The terminal as a user meets it: waiting indicators, tool previews at 80 columns,
piped questions, /model checks, Ctrl-C at an idle prompt, one wording throughout."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import repl_environ, run_hermes

pexpect = pytest.importorskip("pexpect")

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
PROMPT = "hermes>"


@pytest.fixture
def env(fake_llm, hermes_home: Path, workspace: Path) -> dict[str, str]:
    return repl_environ(
        fake_llm.env("openai"), hermes_home, workspace, columns=80, lines=30, stream_timeout=20
    )


def screen_lines(raw: str) -> list[str]:
    """What stays on screen: per line, the text after its last carriage return."""
    return [ANSI.sub("", line).rstrip("\r").split("\r")[-1].rstrip() for line in raw.split("\n")]


def repl(env: dict[str, str], cwd: Path):
    child = pexpect.spawn(
        sys.executable,
        ["-m", "hermes"],
        env=env,
        cwd=str(cwd),
        dimensions=(30, 80),
        encoding="utf-8",
        timeout=30,
    )
    child.expect_exact(PROMPT)
    return child


def say(child, text: str) -> None:
    child.send(text)
    child.send("\r")


def quit_(child) -> None:
    say(child, "/exit")
    child.expect(pexpect.EOF)


def test_a_waiting_line_shows_until_the_first_token_and_while_a_tool_runs(fake_llm, env, workspace):
    fake_llm.reply(tool_calls=[("run_bash", {"command": "sleep 2; echo slept"})], delay=2)
    fake_llm.reply("All done now.", delay=2)
    child = repl(env, workspace)
    say(child, "take your time")
    child.expect("thinking…")
    child.expect_exact("→ run_bash(")
    child.expect("running run_bash…")
    child.expect("slept")
    child.expect("thinking…")
    child.expect("All done now")
    child.expect_exact(PROMPT)
    quit_(child)


def test_tool_previews_keep_whitespace_and_cut_at_the_terminal_width(fake_llm, env, workspace):
    words = " ".join(f"word{n:02d}" for n in range(30))  # ~210 characters of whole words
    command = f"printf 'col1    col2\\n{words}\\n'"
    fake_llm.reply(tool_calls=[("run_bash", {"command": command})])
    fake_llm.reply("Printed.")
    child = repl(env, workspace)
    say(child, "print a table")
    child.expect("Printed")
    lines = screen_lines(child.before)
    quit_(child)

    call = next(line for line in lines if line.startswith("→ run_bash("))
    assert len(call) <= 80 and call.endswith("…")
    assert "  col1    col2" in lines  # runs of spaces survive
    [long] = [line for line in lines if line.startswith("  word00 word01")]
    assert len(long) <= 80 and long.endswith("…")
    assert re.search(r"word\d\d…$", long)  # cut after a whole word, not inside one


def test_a_question_can_come_on_stdin(fake_llm, env, workspace):
    fake_llm.reply("Piped in fine.")
    result = subprocess.run(
        [sys.executable, "-m", "hermes", "chat"],
        input="what is on stdin?\n",
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Piped in fine."
    assert fake_llm.last_request.json["messages"][-1]["content"].startswith("what is on stdin?")


def test_model_checks_the_shape_of_its_argument(fake_llm, env, workspace):
    lines = "/model gpt 4\n/model <script>\n/model anthropic/claude-sonnet-4.6\n/model\n"
    result = subprocess.run(
        [sys.executable, "-m", "hermes"],
        input=lines,
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert "'gpt 4' is not a model id" in out
    assert "'<script>' is not a model id" in out
    assert "Switched to openai:anthropic/claude-sonnet-4.6" in out
    assert out.count("is not a model id") == 2


def test_ctrl_c_at_an_idle_prompt_says_how_to_quit(env, workspace):
    child = repl(env, workspace)
    child.sendintr()
    child.expect("Ctrl-D or /exit quits")
    child.expect_exact(PROMPT)
    quit_(child)


def test_counts_are_worded_in_the_right_number(fake_llm, env, workspace, tmp_path):
    fake_llm.reply("One answer.")
    assert run_hermes(["chat", "-q", "hi"], env=env, cwd=workspace).returncode == 0
    out = tmp_path / "export.json"
    result = run_hermes(["export", "-o", str(out)], env=env, cwd=workspace)
    assert result.stdout.startswith("wrote 1 session, 2 messages to"), result.stdout
