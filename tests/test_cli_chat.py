"""`hermes chat -q` as a user runs it: a real subprocess against the scripted model server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import clean_environ
from tests.helpers import run_hermes as hermes

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def env(hermes_home, workspace, fake_llm, wire):
    return clean_environ(
        **fake_llm.env(wire),
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_MAX_RETRIES="1",
    )


def test_answer_is_streamed_to_stdout(env, workspace, fake_llm):
    (workspace / "todo.txt").write_text("buy milk\n")
    fake_llm.reply(tool_calls=[("read_file", {"path": "todo.txt"})])
    fake_llm.reply(text="Your list says: buy milk.")
    result = hermes(["chat", "-q", "what is on my list?"], env=env, cwd=workspace)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Your list says: buy milk."
    assert "read_file" in result.stderr
    assert "Traceback" not in result.stderr


def test_json_prints_the_event_stream(env, workspace, fake_llm):
    fake_llm.reply(tool_calls=[("list_dir", {})])
    fake_llm.reply(text="Nothing much here.", usage=(30, 4))
    result = hermes(["chat", "-q", "look around", "--json"], env=env, cwd=workspace)

    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn_start" and kinds[-2:] == ["usage", "done"]
    assert {"tool_call", "tool_result", "text"} <= set(kinds)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert len({e["turn_id"] for e in events}) == 1
    call = next(e for e in events if e["type"] == "tool_call")
    assert set(call) == {"seq", "turn_id", "type", "id", "name", "input"}
    result_event = next(e for e in events if e["type"] == "tool_result")
    assert set(result_event) >= {"id", "name", "output", "is_error", "duration_ms"}
    usage = events[-2]
    assert set(usage) == {
        "seq",
        "turn_id",
        "type",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost_usd",
    }
    assert events[-1]["stop_reason"] == "end_turn"
    assert isinstance(events[-1]["assistant_message_id"], int)


def test_session_continues_with_its_history(env, workspace, fake_llm):
    fake_llm.reply(text="Nice to meet you, Ada.")
    first = hermes(["chat", "-q", "my name is Ada", "--json"], env=env, cwd=workspace)
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    fake_llm.reply(text="You are Ada.")
    fake_llm.reply(text="I met Ada and learned her name.")  # the session summary
    second = hermes(
        ["chat", "-q", "who am I?", "--session", str(session_id)], env=env, cwd=workspace
    )
    assert second.returncode == 0, second.stderr
    assert "my name is Ada" in str(fake_llm.requests[1].json["messages"])
    # One model call per one-shot turn: no hidden summary call eats a scripted reply.
    assert len(fake_llm.requests) == 2 and fake_llm.pending == 1


def test_provider_error_exits_non_zero_with_one_line(env, workspace, fake_llm):
    for _ in range(3):
        fake_llm.error(500)
    result = hermes(["chat", "-q", "hello"], env=env, cwd=workspace)
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("hermes: error:")
    assert "500" in result.stderr


def test_unknown_session_is_a_clear_error(env, workspace):
    result = hermes(["chat", "-q", "hello", "--session", "999"], env=env, cwd=workspace)
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0
    assert "999" in result.stderr


def test_missing_key_names_the_variable(hermes_home, workspace):
    env = clean_environ(HERMES_HOME=str(hermes_home), HERMES_PROVIDER="anthropic")
    result = hermes(["chat", "-q", "hello"], env=env, cwd=workspace)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "hermes: error: ANTHROPIC_API_KEY is not set: set it to use the anthropic provider "
        "(or point HERMES_BASE_URL at a local server)."
    )


def test_unknown_provider_lists_the_valid_ones(hermes_home, workspace):
    env = clean_environ(HERMES_HOME=str(hermes_home), HERMES_PROVIDER="gemini")
    result = hermes(["chat", "-q", "hello"], env=env, cwd=workspace)
    assert result.returncode == 2
    assert "anthropic, openai, openrouter" in result.stderr
    assert "Traceback" not in result.stderr


def test_warnings_go_to_the_log_file_not_the_terminal(env, workspace, hermes_home, fake_llm):
    fake_llm.reply(tool_calls=[("list_dir", {}), ("list_dir", {}), ("list_dir", {})])
    fake_llm.reply(text="Looked three times.")
    fake_llm.error(500)  # the curator cannot reach the model...
    fake_llm.error(500)
    result = hermes(["chat", "-q", "look around thrice"], env=env, cwd=workspace)

    assert result.returncode == 0, result.stderr  # ...which never fails the turn
    assert result.stdout.strip() == "Looked three times."
    assert "curator" not in result.stderr
    assert "curator" in (hermes_home / "hermes.log").read_text()


@pytest.mark.parametrize("text", ["", "   \n"])
def test_an_empty_message_is_refused_in_one_line(env, workspace, fake_llm, text):
    result = hermes(["chat", "-q", text], env=env, cwd=workspace)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "message is empty" in result.stderr
    assert not fake_llm.requests


def test_usage_errors_are_one_line(env, workspace):
    result = hermes(["chat", "--session", "abc", "-q", "hi"], env=env, cwd=workspace)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("hermes: error:") and "--session" in result.stderr


def test_missing_workspace_is_a_config_error(env, workspace, tmp_path, fake_llm):
    env = dict(env, HERMES_WORKSPACE=str(tmp_path / "gone"))
    result = hermes(["chat", "-q", "hi"], env=env, cwd=workspace)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "HERMES_WORKSPACE" in result.stderr
    assert not fake_llm.requests


def test_ctrl_c_cancels_the_turn_and_exits_130(env, workspace, fake_llm, wire):
    fake_llm.reply("slow " * 40, chunk_size=5, stall=30, stall_after=6)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes", "chat", "-q", "talk slowly", "--json"],
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        # A fresh SIGINT disposition: a background shell may have it ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines = []
    while not any('"text"' in line for line in lines):
        lines.append(proc.stdout.readline())
        assert lines[-1], proc.stderr.read()
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    # Read through the same buffered pipe objects: communicate() would read the raw
    # descriptors and miss lines readline() already buffered.
    out = proc.stdout.read()
    err = proc.stderr.read()
    proc.wait(timeout=30)
    assert time.monotonic() - started < 10
    events = [json.loads(line) for line in lines + out.splitlines() if line.strip()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "done" and events[-1]["stop_reason"] == "cancelled"
    assert proc.returncode == 130
    assert err.count("\n") == 1 and "cancelled" in err and "Traceback" not in err


def test_a_closed_pipe_ends_quietly(env, workspace, fake_llm):
    fake_llm.reply("line\n" * 20000, chunk_size=4000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes", "chat", "-q", "lots"],
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout.readline() == b"line\n"
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    assert proc.wait(timeout=30) != 0
    assert err == b"", err


def test_json_lines_survive_unicode_line_separators(env, workspace, fake_llm):
    # str.splitlines() also splits at U+2028, U+2029 and NEL: they must stay escaped.
    fake_llm.reply(text="one\u2028two\u2029three\x85four ünïcode", chunk_size=100)
    result = hermes(["chat", "-q", "separators", "--json"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    text = "".join(e["delta"] for e in events if e["type"] == "text")
    assert text == "one\u2028two\u2029three\x85four ünïcode"
    assert "ünïcode" in result.stdout  # still readable UTF-8, not \\u escapes


def test_plain_output_carries_no_terminal_control_sequences(env, workspace, fake_llm):
    (workspace / "evil.txt").write_text("\x1b]0;owned\x07\x1b[2Jgotcha\n")
    fake_llm.reply(tool_calls=[("read_file", {"path": "evil.txt"})])
    fake_llm.reply(text="Title \x1b]0;pwned\x07 and \x1b[31mred\x1b[0m\r\nend\x07", chunk_size=100)
    result = hermes(["chat", "-q", "read evil.txt"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout + result.stderr
    assert "\x07" not in result.stdout + result.stderr
    assert "red" in result.stdout and "end" in result.stdout and "gotcha" in result.stderr


def test_help_imports_no_heavy_library():
    # `hermes --help` must stay fast: SDKs, SQLAlchemy and rich load on first real use.
    code = (
        "import sys\n"
        "from hermes.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ['anthropic', 'openai', 'sqlalchemy', 'alembic', 'rich', 'prompt_toolkit']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_the_readme_demo_gives_a_tool_using_answer(hermes_home, workspace, fake_llm):
    # README: "No key yet?" runs this script through HERMES_PROVIDER/HERMES_BASE_URL.
    script = json.loads((ROOT / "examples" / "demo-script.json").read_text())
    fake_llm.script(script)
    (workspace / "a.txt").write_text("a\n")
    env = clean_environ(
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_PROVIDER="openai",
        HERMES_BASE_URL=fake_llm.base_url("openai"),
    )
    result = hermes(["chat", "-q", "how many files are here?"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "counted its entries" in result.stdout
    assert "→ list_dir" in result.stderr and "→ run_bash" in result.stderr
    assert "ok in" in result.stderr and "exit code 0" in result.stderr
