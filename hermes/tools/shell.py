"""run_bash: one shell command in the workspace, bounded in time and output.

The command runs in its own session (process group), so on a timeout or a
cancel the whole group is stopped: ``sleep 100 &`` and ``(sleep 100)`` go with
it. Background processes are also stopped when the command finishes; nothing
outlives the tool call unless it detaches itself with ``setsid``.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hermes.config import child_environment
from hermes.errors import Cancelled, ToolError
from hermes.tools.output import HeadTailBuffer
from hermes.tools.registry import ToolContext, tool

# The longest timeout the model may ask for, unless HERMES_BASH_TIMEOUT is longer.
TIMEOUT_CAP = 600.0
_POLL = 0.05  # how often the cancel flag and the deadline are checked, in seconds
_EXIT_GRACE = 0.1  # how long background writers may keep the pipe open after bash exits
_TERM_GRACE = 0.5  # between SIGTERM and SIGKILL
_CHUNK = 65536


@dataclass(frozen=True)
class CommandResult:
    """What one command did. ``output`` is stdout and stderr combined, already bounded."""

    output: str
    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False
    duration: float = 0.0


@tool(kind="shell")
def run_bash(ctx: ToolContext, command: str, timeout: int | None = None) -> str:
    """Run a command with bash in the workspace directory and return its output.

    stdout and stderr come back together, followed by the exit code. There is
    no stdin: commands that wait for input get end-of-file. Background
    processes are stopped when the command ends. Very long output keeps its
    beginning and end with a marker in between; redirect to a file and use
    read_file or search_files for more.

    Args:
        command: The bash command line, e.g. "ls -la" or "python -m pytest -q".
        timeout: Seconds before the command is killed; defaults to the configured limit (at most 600).
    """
    if not command.strip():
        raise ToolError("command is empty; give a bash command line to run")
    if "\x00" in command:
        raise ToolError("command contains a NUL byte, which bash cannot take")
    seconds = _effective_timeout(ctx.config.bash_timeout, timeout)
    try:
        result = run_command(
            command,
            cwd=ctx.workspace,
            timeout=seconds,
            output_limit=ctx.config.tool_output_limit,
            env=child_environment(),
            cancel=ctx.cancel,
        )
    except OSError as exc:  # no bash, or the workspace folder is gone
        raise ToolError(
            f"could not start bash in {ctx.workspace}: {exc.strerror}; "
            "check that bash is installed and HERMES_WORKSPACE exists"
        ) from None
    output = result.output.rstrip("\n") or "(no output)"
    if result.cancelled:
        raise Cancelled("run_bash was cancelled by the user; the command was stopped")
    if result.timed_out:
        raise ToolError(
            f"timed out after {seconds:g} s; the command and its children were killed. "
            f"Output so far:\n{output}"
        )
    return f"{output}\n[{describe_exit(result.exit_code)}]"


def describe_exit(code: int | None) -> str:
    """'exit code 0', or the signal that killed bash itself."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit code {code}"


def _effective_timeout(default: float, requested: int | None) -> float:
    if requested is None:
        return default
    if requested <= 0:
        raise ToolError("timeout must be a positive number of seconds")
    return float(min(requested, max(TIMEOUT_CAP, default)))


def run_command(
    command: str,
    *,
    cwd: Path,
    timeout: float,
    output_limit: int,
    env: dict[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> CommandResult:
    """Run ``bash -c command`` in its own process group with no stdin.

    Output is read as it comes into a bounded head/tail buffer. On timeout
    or cancel the group gets SIGTERM, then SIGKILL.
    """
    started = time.monotonic()
    deadline = started + timeout
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None
    reader = _PipeReader(proc.stdout, HeadTailBuffer(output_limit))
    timed_out = cancelled = False
    exited_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if now >= deadline:
                timed_out = True
                break
            if exited_at is None and _has_exited(proc):
                exited_at = now
            if exited_at is not None and (reader.eof or now - exited_at >= _EXIT_GRACE):
                break
            reader.read(min(_POLL, deadline - now))
    finally:
        _stop_group(proc.pid, reader)
        reader.close()
        proc.wait()
    return CommandResult(
        output=reader.buffer.text(),
        exit_code=None if (timed_out or cancelled) else proc.returncode,
        timed_out=timed_out,
        cancelled=cancelled,
        duration=time.monotonic() - started,
    )


class _PipeReader:
    """Non-blocking reads from the child's pipe into a bounded buffer."""

    def __init__(self, pipe, buffer: HeadTailBuffer):
        self.pipe = pipe
        self.fd = pipe.fileno()
        self.buffer = buffer
        self.eof = False
        os.set_blocking(self.fd, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)

    def read(self, wait: float) -> None:
        """Wait up to ``wait`` seconds for output and take what is there."""
        if self.eof:
            # Nothing left to read; bash closed its output but may still be running.
            time.sleep(max(min(wait, 0.01), 0))
            return
        if not self.selector.select(max(wait, 0)):
            return
        # Bounded so a flood of output cannot starve the deadline checks.
        for _ in range(64):
            try:
                data = os.read(self.fd, _CHUNK)
            except BlockingIOError:
                return
            if not data:
                self.eof = True
                return
            self.buffer.write(data)

    def drain(self, seconds: float) -> None:
        """Read until end-of-file or until ``seconds`` pass (a detached writer may hold the pipe)."""
        end = time.monotonic() + seconds
        while not self.eof and time.monotonic() < end:
            self.read(min(_POLL, end - time.monotonic()))

    def close(self) -> None:
        self.selector.close()
        self.pipe.close()


def _stop_group(pgid: int, reader: _PipeReader) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left.

    Members that hold the pipe close it as they exit, so end-of-file ends the
    grace period early; zombies would make a liveness probe lie, so the
    SIGKILL is sent regardless (it is a no-op for the dead).
    """
    if not _signal_group(pgid, signal.SIGTERM):
        reader.drain(_EXIT_GRACE)
        return
    reader.drain(_TERM_GRACE)
    _signal_group(pgid, signal.SIGKILL)
    reader.drain(_EXIT_GRACE)


def _has_exited(proc: subprocess.Popen) -> bool:
    """True once bash has exited, without reaping it where the OS allows.

    An unreaped bash keeps its pid in use, so the group id we signal later can
    never belong to some unrelated new process.
    """
    if hasattr(os, "waitid"):
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    return proc.poll() is not None


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False when no process of it is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed its credentials (setuid); nothing more we can do.
        return False
    return True
