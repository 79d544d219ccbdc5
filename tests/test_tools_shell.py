"""run_bash against real bash processes: timeouts, process groups, output bounds, secrets."""

from __future__ import annotations

import os
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from hermes.errors import Cancelled, ToolError
from hermes.tools.registry import Tool, ToolContext
from hermes.tools.shell import TIMEOUT_CAP, _effective_timeout, run_bash, run_command


@pytest.fixture
def ctx(make_config) -> ToolContext:
    return ToolContext(config=make_config(tool_output_limit=4000, bash_timeout=5.0))


def call(t: Tool, ctx: ToolContext, **arguments) -> str:
    """Call a tool the way the turn loop does: validate the arguments, then run it."""
    return t.function(ctx, **t.validate(arguments))


def gone(pid: int, within: float = 2.0) -> bool:
    """True once ``pid`` has exited (a zombie waiting for its reaper counts as exited)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_runs_in_the_workspace_and_reports_the_exit_code(ctx, workspace):
    (workspace / "hello.txt").write_text("hi")
    out = call(run_bash, ctx, command="pwd; ls; echo oops >&2")
    assert out.splitlines() == [str(workspace.resolve()), "hello.txt", "oops", "[exit code 0]"]


def test_non_zero_exit_is_a_normal_result(ctx):
    out = call(run_bash, ctx, command="echo before; exit 2")
    assert out == "before\n[exit code 2]"


def test_no_output_says_so(ctx):
    assert call(run_bash, ctx, command="true") == "(no output)\n[exit code 0]"


def test_bash_killed_by_a_signal_is_named(ctx):
    assert call(run_bash, ctx, command="kill -9 $$").endswith("[killed by SIGKILL]")


def test_stdin_is_not_inherited(ctx):
    # Give this process a stdin that never ends; an inherited one would make cat hang.
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        started = time.monotonic()
        out = call(run_bash, ctx, command="cat; echo done", timeout=5)
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    assert out == "done\n[exit code 0]"
    assert time.monotonic() - started < 2


def test_huge_output_keeps_head_and_tail_with_a_marker(make_config):
    ctx = ToolContext(config=make_config(tool_output_limit=2000))
    tracemalloc.start()
    try:
        out = call(run_bash, ctx, command="seq 1 1000000")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.startswith("1\n2\n3\n")
    assert out.endswith("999999\n1000000\n[exit code 0]")
    assert "bytes truncated ...]" in out
    assert len(out) < 2200
    # 6.9 MB went through; only small fixed buffers were held.
    assert peak < 1_000_000


def test_flood_of_output_is_read_incrementally(make_config):
    ctx = ToolContext(config=make_config(tool_output_limit=1000))
    started = time.monotonic()
    out = call(run_bash, ctx, command="yes | head -c 5000000")
    assert "[... 4999000 bytes truncated ...]" in out
    assert time.monotonic() - started < 3


def test_output_is_decoded_and_stripped_of_control_characters(ctx):
    out = call(run_bash, ctx, command=r"printf 'a\000b\033[31mred\033[0m\377 tab\there\r\n'")
    assert out == "abred\ufffd tab\there\n[exit code 0]"


def test_timeout_kills_the_whole_process_group(ctx, workspace):
    command = "sleep 300 & echo $! > bg.pid; (sleep 300; true) & echo $! > sub.pid; sleep 30"
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 1 s") as raised:
        call(run_bash, ctx, command="echo started; " + command, timeout=1)
    assert time.monotonic() - started < 3
    assert "started" in raised.value.message  # the output so far comes back
    assert gone(int((workspace / "bg.pid").read_text()))
    assert gone(int((workspace / "sub.pid").read_text()))


def test_processes_ignoring_sigterm_get_sigkill(ctx, workspace):
    # trap '' is inherited by the children, so only SIGKILL stops the sleep.
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out"):
        call(run_bash, ctx, command="trap '' TERM; sleep 30 & echo $! > s.pid; wait", timeout=1)
    assert time.monotonic() - started < 3
    assert gone(int((workspace / "s.pid").read_text()))


def test_background_processes_stop_when_the_command_ends(ctx, workspace):
    started = time.monotonic()
    out = call(run_bash, ctx, command="sleep 300 > /dev/null 2>&1 & echo $! > bg.pid; echo ok")
    assert out == "ok\n[exit code 0]"
    assert time.monotonic() - started < 2
    assert gone(int((workspace / "bg.pid").read_text()))


def test_background_process_holding_the_pipe_does_not_stall_the_result(ctx):
    started = time.monotonic()
    out = call(run_bash, ctx, command="sleep 300 & echo ok")
    assert out == "ok\n[exit code 0]"
    assert time.monotonic() - started < 2


def test_cancel_stops_a_running_command(ctx, workspace):
    timer = threading.Timer(0.3, ctx.cancel.set)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(Cancelled):
            call(run_bash, ctx, command="sleep 30 & echo $! > c.pid; wait", timeout=20)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 2.5
    assert gone(int((workspace / "c.pid").read_text()))


def test_secrets_are_not_passed_to_commands(ctx, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-model")
    monkeypatch.setenv("HERMES_WEB_PASSWORD", "hunter2")
    monkeypatch.setenv("HERMES_TEST_HARMLESS", "visible")
    out = call(run_bash, ctx, command="env")
    assert "sk-not-for-the-model" not in out
    assert "hunter2" not in out
    assert "HERMES_TEST_HARMLESS=visible" in out
    assert "GIT_TERMINAL_PROMPT=0" in out


def test_timeout_argument_is_checked_and_capped(ctx):
    with pytest.raises(ToolError, match="positive"):
        call(run_bash, ctx, command="true", timeout=0)
    # Small models quote numbers; the registry accepts "2".
    assert call(run_bash, ctx, command="true", timeout="2") == "(no output)\n[exit code 0]"
    assert _effective_timeout(120.0, 10_000) == TIMEOUT_CAP
    assert _effective_timeout(900.0, 10_000) == 900.0
    assert _effective_timeout(120.0, None) == 120.0
    assert _effective_timeout(120.0, 3) == 3.0


def test_empty_command_is_refused(ctx):
    with pytest.raises(ToolError, match="empty"):
        call(run_bash, ctx, command="   ")


def test_missing_workspace_is_a_tool_error(make_config, tmp_path):
    ctx = ToolContext(config=make_config(workspace=tmp_path / "gone"))
    with pytest.raises(ToolError, match="could not start bash"):
        call(run_bash, ctx, command="true")


def test_run_command_reports_the_duration(tmp_path):
    result = run_command("echo x", cwd=tmp_path, timeout=5, output_limit=100)
    assert (result.output, result.exit_code, result.timed_out) == ("x\n", 0, False)
    assert 0 <= result.duration < 2
