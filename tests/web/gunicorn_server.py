"""The dashboard under a real gunicorn, started from the Procfile's web line.

Streaming only means something through the real server: gunicorn's gthread
worker writes each chunk the app yields, and a test can see whether lines
arrive as they happen or all at the end. :class:`GunicornServer` runs
``Procfile``'s ``web:`` command with ``PORT`` and the Hermes environment set,
keeps its output in files (to grep for secrets), and can stop it gently
(SIGTERM) or brutally (SIGKILL of the whole process group).
:class:`DashboardClient` logs in the way a browser does and reads NDJSON
streams line by line, stamping each line with the time it arrived.

Used by tests/web/test_gunicorn*.py and bench/bench_web.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"
SECRET_KEY = "test-secret-key-" + "k" * 32
API_KEY = "sk-ant-test-key-never-shown"

_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


def procfile_command(name: str = "web") -> list[str]:
    """The Procfile's command for ``name``, split like a shell would."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        key, _, command = line.partition(":")
        if key.strip() == name:
            return shlex.split(command)
    raise AssertionError(f"the Procfile has no {name!r} line")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class GunicornServer:
    """One gunicorn master and its worker, on a free port, with its own HERMES_HOME."""

    def __init__(self, home: Path, workspace: Path, provider_env: dict[str, str], **env: str):
        self.home = home
        self.workspace = workspace
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out_path = home.parent / f"gunicorn-{self.port}.log"
        self.env = server_environ(
            PORT=str(self.port),
            FLASK_SECRET_KEY=SECRET_KEY,
            HERMES_WEB_PASSWORD=PASSWORD,
            HERMES_HOME=str(home),
            HERMES_WORKSPACE=str(workspace),
            HERMES_MAX_RETRIES="0",
            **provider_env,
            **env,
        )
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> GunicornServer:
        command = procfile_command()
        out = self.out_path.open("ab")
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, so a kill takes the worker too
        )
        out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"gunicorn exited at start:\n{self.output()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"gunicorn did not answer /healthz in {timeout} s:\n{self.output()}")

    def worker_pid(self) -> int:
        """The worker process (the master's only child): the one that holds the turns."""
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        pids = [int(p) for p in children.read_text().split()]
        assert len(pids) == 1, f"expected one worker, found {pids}"
        return pids[0]

    def rss_bytes(self) -> int:
        """Resident memory of the worker."""
        for line in Path(f"/proc/{self.worker_pid()}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS in /proc status")

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM, the way a platform stops a deployment; returns the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        """SIGKILL of master and worker at once: a crash, an out-of-memory kill, a pulled plug."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                self.terminate(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self) -> str:
        return self.out_path.read_text(errors="replace") if self.out_path.exists() else ""

    def client(self) -> DashboardClient:
        return DashboardClient(self.url).login()


def server_environ(**extra: str) -> dict[str, str]:
    """This environment minus anything pointing at a real account, plus ``extra``; the
    venv's bin first on PATH so the Procfile's ``gunicorn`` is this venv's."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not (
            name.startswith(("HERMES_", "GUNICORN_"))
            or name.endswith(("_API_KEY", "_BASE_URL"))
            or name in ("DATABASE_URL", "FLASK_SECRET_KEY", "PORT", "WEB_CONCURRENCY")
        )
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


@dataclass
class Line:
    """One NDJSON line of a stream and when it arrived (time.monotonic())."""

    at: float
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return self.data.get("type", "")


@dataclass
class Stream:
    """A streamed response: status, headers, and its lines as they came."""

    status: int
    headers: httpx.Headers
    started: float
    lines: list[Line] = field(default_factory=list)
    body: bytes = b""

    def json(self) -> Any:
        """An error answer's JSON body."""
        return json.loads(self.body)

    @property
    def events(self) -> list[dict[str, Any]]:
        """The lines with a seq (pings left out)."""
        return [line.data for line in self.lines if "seq" in line.data]

    @property
    def text(self) -> str:
        return "".join(e["delta"] for e in self.events if e["type"] == "text")

    @property
    def done(self) -> dict[str, Any] | None:
        return next((e for e in self.events if e["type"] == "done"), None)


class DashboardClient:
    """A logged-in browser, minus the browser: cookie, CSRF header, NDJSON reading."""

    def __init__(self, url: str):
        self.url = url
        self.http = httpx.Client(base_url=url, timeout=httpx.Timeout(60, connect=10))
        self.csrf = ""
        self.seen: list[str] = []  # every status line, header and body, for the secrets grep

    def login(self) -> DashboardClient:
        page = self.http.get("/login")
        token = _CSRF.search(page.text).group(1)
        answer = self.http.post("/login", data={"password": PASSWORD, "csrf_token": token})
        assert answer.status_code in (302, 303), answer.text
        self._record(answer)
        home = self.http.get("/")
        self._record(home)
        self.csrf = _CSRF.search(home.text).group(1)  # a fresh token per login
        return self

    def close(self) -> None:
        self.http.close()

    def _record(self, response: httpx.Response, body: bytes | None = None) -> None:
        self.seen.append(f"{response.status_code} {dict(response.headers)}")
        self.seen.append((body if body is not None else response.content).decode(errors="replace"))

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        headers = {"X-CSRF-Token": self.csrf, **kwargs.pop("headers", {})}
        response = self.http.request(method, path, headers=headers, **kwargs)
        self._record(response)
        return response

    def new_session(self) -> int:
        answer = self.request("POST", "/api/sessions", json={})
        assert answer.status_code == 201, answer.text
        return answer.json()["session"]["id"]

    @contextmanager
    def open_stream(
        self, method: str, path: str, **kwargs
    ) -> Iterator[tuple[Stream, Iterator[Line]]]:
        """Open a streamed response; yields it with an iterator of its lines as they arrive."""
        headers = {"X-CSRF-Token": self.csrf, **kwargs.pop("headers", {})}
        started = time.monotonic()
        with self.http.stream(method, path, headers=headers, **kwargs) as response:
            stream = Stream(response.status_code, response.headers, started)
            if response.status_code != 200:
                stream.body = response.read()

            def lines() -> Iterator[Line]:
                buffer = b""
                for chunk in response.iter_raw():
                    at = time.monotonic()
                    stream.body += chunk
                    buffer += chunk
                    while b"\n" in buffer:
                        raw, buffer = buffer.split(b"\n", 1)
                        line = Line(at, json.loads(raw))
                        stream.lines.append(line)
                        yield line

            try:
                yield stream, lines()
            finally:
                self._record(response, stream.body)

    def stream(self, method: str, path: str, **kwargs) -> Stream:
        """Read a streamed response to its end."""
        with self.open_stream(method, path, **kwargs) as (stream, lines):
            if stream.status == 200:
                for _ in lines:
                    pass
        return stream

    def turn(self, session_id: int, message: str) -> Stream:
        return self.stream("POST", f"/api/sessions/{session_id}/turns", json={"message": message})

    def events(self, turn_id: str, after: int = 0) -> Stream:
        return self.stream("GET", f"/api/turns/{turn_id}/events", params={"after": after})

    def session(self, session_id: int) -> dict[str, Any]:
        answer = self.request("GET", f"/api/sessions/{session_id}")
        assert answer.status_code == 200, answer.text
        return answer.json()
