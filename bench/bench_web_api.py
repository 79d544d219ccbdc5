"""Dashboard API latency at scale: /api/sessions first page and /api/memory/search through HTTP.

Builds (or reuses, with ``--home``) a database of ``--messages`` messages with
bench_store's generator, serves it with the Procfile's server (gunicorn with
gunicorn.conf.py; werkzeug's threaded server when gunicorn is missing), logs
in like a browser, and times real HTTP requests on one kept-alive connection.
The same calls straight on the Store are printed beside them, so the HTTP
overhead shows as a ratio. Target: p95 under 50 ms at 1,000,000 messages.

    python bench/bench_web_api.py                          # 1M messages, temp dir
    python bench/bench_web_api.py --messages 20000         # a quick run
    python bench/bench_web_api.py --home /tmp/hermes-bench # build once, reuse after
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_store import TextMaker, build_database, percentile, timed  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from hermes.config import Config  # noqa: E402
from hermes.store import Store  # noqa: E402
from hermes.store.models import sessions_table  # noqa: E402

TARGET_MS = 50.0
PASSWORD = "bench-password"
SECRET = "bench-secret-key-0123456789abcdef0123456789"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ensure_database(home: Path, messages: int, per_session: int, maker: TextMaker) -> None:
    config = Config(home=home, workspace=home, database_url=f"sqlite:///{home / 'hermes.db'}")
    with Store.open(config) as store:
        latest = store.latest_session()
        if latest is not None:
            print(f"reusing the database in {home}", file=sys.stderr)
            return
        seconds = build_database(store, messages, per_session, maker)
        print(f"build: {messages:,} messages in {seconds:.1f} s", file=sys.stderr)


def start_server(home: Path, port: int, embeddings: str = "local") -> subprocess.Popen:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HERMES_")},
        "HERMES_HOME": str(home),
        "HERMES_EMBEDDINGS": embeddings,
        "HERMES_WORKSPACE": str(home),
        "FLASK_SECRET_KEY": SECRET,
        "HERMES_WEB_PASSWORD": PASSWORD,
        "PORT": str(port),
    }
    gunicorn = shutil.which("gunicorn", path=str(Path(sys.executable).parent)) or shutil.which(
        "gunicorn"
    )
    if gunicorn:
        command = [gunicorn, "--config", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"]
        command.append("wsgi:app")
    else:
        code = (
            "from werkzeug.serving import run_simple; import wsgi; "
            f"run_simple('127.0.0.1', {port}, wsgi.app, threaded=True)"
        )
        command = [sys.executable, "-c", code]
    print(f"server: {Path(command[0]).name}", file=sys.stderr)
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by a process and its children (Linux /proc): the
    server's cost per request whatever else the machine is running."""
    total, pending = 0.0, [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


class Browser:
    """One kept-alive connection with the login cookie, like a dashboard tab."""

    def __init__(self, port: int):
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.cookie = ""

    def request(self, method: str, path: str, body: str | None = None, headers=None):
        headers = {"Cookie": self.cookie, **(headers or {})}
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        cookie = response.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        return response.status, data

    def log_in(self, deadline: float) -> None:
        while True:
            try:
                status, page = self.request("GET", "/login")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        token = re.search(rb'name="csrf-token" content="([^"]+)"', page).group(1).decode()
        form = urlencode({"password": PASSWORD, "csrf_token": token})
        status, _ = self.request(
            "POST", "/login", form, {"Content-Type": "application/x-www-form-urlencoded"}
        )
        assert status == 302, f"login failed: {status}"

    def get_json(self, path: str):
        status, data = self.request("GET", path)
        assert status == 200, (path, status, data[:200])
        return json.loads(data)


def row(name: str, http_times: list[float], direct_times: list[float]) -> None:
    p95_http, p95_direct = percentile(http_times, 95), percentile(direct_times, 95)
    verdict = "ok" if p95_http < TARGET_MS else "OVER"
    print(
        f"{name:<26} HTTP p50 {percentile(http_times, 50):6.2f}  p95 {p95_http:6.2f} ms   "
        f"Store p95 {p95_direct:6.2f} ms   HTTP/Store {p95_http / max(p95_direct, 1e-3):5.2f}x   "
        f"target p95 < {TARGET_MS:.0f} ms: {verdict}"
    )


def measure(
    home: Path,
    *,
    messages: int,
    per_session: int = 40,
    queries: int = 200,
    embeddings: str = "local",
) -> dict:
    """Build or reuse the database in ``home``, serve it, and time both routes.

    Returns ``{"messages": stored count, "sessions": (http ms, store ms),
    "search": (http ms, store ms)}`` (lists of milliseconds), for bench_web.py
    to print beside its own figures."""
    # The vocabulary of bench_store.py's database (its generator is seeded with 42),
    # so a database built by either bench is searched with words it holds.
    maker = TextMaker(random.Random(42))
    rng = random.Random(7)
    home.mkdir(parents=True, exist_ok=True)
    ensure_database(home, messages, per_session, maker)
    config = Config(
        home=home,
        workspace=home,
        database_url=f"sqlite:///{home / 'hermes.db'}",
        embeddings=embeddings,
    )

    words = maker.words
    questions = [
        f"when did I {rng.choice(words[50:2000])} the {rng.choice(words[2000:20000])}?"
        for _ in range(queries)
    ]

    port = free_port()
    server = start_server(home, port, embeddings)
    try:
        browser = Browser(port)
        browser.log_in(time.monotonic() + 120)
        # Warm the page cache and the connection; the first search also loads
        # every vector into the server (a minute at 1M on a loaded machine).
        for _ in range(5):
            browser.get_json("/api/sessions?limit=50")
            browser.get_json("/api/memory/search?" + urlencode({"q": questions[0]}))

        cpu = tree_cpu_seconds(server.pid)
        http_list = timed(lambda: browser.get_json("/api/sessions?limit=50"), queries)
        cpu_list, cpu = (
            (tree_cpu_seconds(server.pid) - cpu) * 1000 / queries,
            tree_cpu_seconds(server.pid),
        )
        pending = list(questions)
        http_search = timed(
            lambda: browser.get_json(
                "/api/memory/search?" + urlencode({"q": pending.pop(), "limit": 20})
            ),
            len(questions),
        )
        cpu_search = (tree_cpu_seconds(server.pid) - cpu) * 1000 / len(questions)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()

    with Store.open(config) as store:
        direct_list = timed(lambda: store.list_sessions(limit=50), queries)
        pending = list(questions)
        direct_search = timed(lambda: store.search(pending.pop(), limit=20), len(questions))
        with store.engine.connect() as connection:
            total = connection.execute(select(func.sum(sessions_table.c.message_count))).scalar()
    return {
        "messages": total,
        "sessions": (http_list, direct_list),
        "search": (http_search, direct_search),
        "server_cpu_ms": {"sessions": cpu_list, "search": cpu_search},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--per-session", type=int, default=40)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--home", type=Path, help="build the database here and reuse it later")
    parser.add_argument(
        "--embeddings",
        default="local",
        help="HERMES_EMBEDDINGS for the server and the Store (off: words only; "
        "fast/local: fused, once `hermes db reindex` has filled that space)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = (args.home or Path(tmp)).resolve()
        found = measure(
            home,
            messages=args.messages,
            per_session=args.per_session,
            queries=args.queries,
            embeddings=args.embeddings,
        )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"dashboard API at {found['messages']:,} stored messages, {args.queries} requests each, "
        f"HERMES_EMBEDDINGS={args.embeddings}, load average {load}:"
    )
    row("/api/sessions first page", *found["sessions"])
    row("/api/memory/search", *found["search"])
    cpu = found["server_cpu_ms"]
    print(
        f"server CPU per request (independent of the load): sessions {cpu['sessions']:.1f} ms, "
        f"search {cpu['search']:.1f} ms"
    )


if __name__ == "__main__":
    main()
