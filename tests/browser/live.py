"""The real dashboard under gunicorn, pointed at the scripted model server.

Shared by the browser tests (tests/browser/conftest.py) and bench/bench_page.py:
:class:`LiveApp` starts ``tests.fakes.llm_server.FakeLLM`` in this process and the
Procfile's web command (gunicorn with gunicorn.conf.py) in a subprocess on a free
port, with a fresh HERMES_HOME, and seeds data straight into the same SQLite file
(WAL mode lets both processes use it).
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hermes.config import Config
from hermes.messages import Message
from tests.fakes.llm_server import FakeLLM
from tests.helpers import clean_environ

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PASSWORD = "correct horse battery staple"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def web_command() -> list[str]:
    """The Procfile's ``web:`` line, so the tests run the app exactly as it is deployed."""
    procfile = ROOT / "Procfile"
    if procfile.exists():
        for line in procfile.read_text().splitlines():
            if line.startswith("web:"):
                return shlex.split(line.removeprefix("web:").strip())
    return ["gunicorn", "-k", "gthread", "--threads", "32", "wsgi:app"]


class LiveApp:
    """A running dashboard: ``url``, ``fake`` (the scripted model) and seeding helpers."""

    def __init__(
        self, home: Path, *, extra_env: dict[str, str] | None = None, root: Path | None = None
    ):
        self.home = home
        # The checkout gunicorn serves (bench/bench_page.py --app-root runs another one, e.g.
        # main's, against the same browser and figures); seeding always uses this one's store.
        self.root = Path(root or ROOT)
        self.workspace = home.parent / "workspace"
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.extra_env = extra_env or {}
        self.fake = FakeLLM()
        self.proc: subprocess.Popen | None = None
        self.port = 0  # chosen in start(), after the fake has its own port
        self.url = ""
        self.log_path = Path(os.environ.get("HERMES_BROWSER_LOG", home.parent / "gunicorn.log"))
        self._store = None

    def start(self) -> LiveApp:
        self.fake.start()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = clean_environ(
            **self.fake.env("anthropic"),
            HERMES_HOME=str(self.home),
            HERMES_WORKSPACE=str(self.workspace),
            HERMES_MODEL="claude-sonnet-4-6",
            FLASK_SECRET_KEY="browser-tests-secret-key-0123456789",
            HERMES_WEB_PASSWORD=PASSWORD,
            PORT=str(self.port),
            PYTHONUNBUFFERED="1",
            **({"PYTHONPATH": str(self.root)} if self.root != ROOT else {}),
            **self.extra_env,
        )
        command = web_command()
        command[0] = str(Path(sys.executable).parent / command[0])
        command += ["--bind", f"127.0.0.1:{self.port}"]
        self.log = open(self.log_path, "w")  # noqa: SIM115 (kept open for the server's life)
        self.proc = subprocess.Popen(
            command,
            cwd=self.root,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("gunicorn exited:\n" + self.log_path.read_text()[-3000:])
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(
            "gunicorn did not answer /healthz:\n" + self.log_path.read_text()[-3000:]
        )

    def stop(self) -> None:
        if self._store is not None:
            self._store.close()
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.fake.stop()
        if getattr(self, "log", None):
            self.log.close()

    # -- seeding --------------------------------------------------------------------------

    @property
    def store(self):
        if self._store is None:
            from hermes.store import Store

            config = Config(
                home=self.home,
                workspace=self.workspace,
                database_url=f"sqlite:///{self.home / 'hermes.db'}",
            )
            self._store = Store.open(config)
        return self._store

    def seed_session(
        self,
        title: str | None,
        messages: list[tuple[str, str]] | list[Message],
        *,
        source: str = "import",
        summary: str | None = "A seeded conversation.",
    ) -> int:
        """A whole conversation in one transaction (as an import would write it); its id.

        It has a summary already, so starting a new chat never asks the scripted model to
        write one (that request would take a reply a test queued for its own turn)."""
        from hermes.store.bulk import SessionRecord

        start = datetime.now(UTC) - timedelta(days=3)
        msgs = [m if isinstance(m, Message) else Message(role=m[0], content=m[1]) for m in messages]
        timed = [(m, start + timedelta(seconds=i)) for i, m in enumerate(msgs)]
        record = SessionRecord(
            title=title,
            created_at=start,
            updated_at=start + timedelta(seconds=len(msgs)),
            messages=timed,
            source=source,
            summary=summary,
        )
        session_id = self.store.add_session_record(record)
        assert session_id is not None
        return session_id

    def settle_summary(self, page, session_id: int) -> None:
        """Have the summary of a chat with two user messages written now, with its own reply,
        so it does not take a reply queued by a later test (the app writes it on "New chat")."""
        self.fake.reply(text="A short summary.")
        token = page.locator('meta[name="csrf-token"]').get_attribute("content")
        response = page.request.post(
            "/api/sessions",
            data={"previous_session_id": session_id},
            headers={"X-CSRF-Token": token},
        )
        assert response.status == 201, response.text()
        deadline = time.monotonic() + 30
        while self.store.get_session(session_id).summary is None and time.monotonic() < deadline:
            time.sleep(0.1)

    def message_ids(self, session_id: int) -> list[int]:
        return [m.id for m in self.store.messages(session_id)]
