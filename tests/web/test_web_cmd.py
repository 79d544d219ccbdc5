"""`hermes web` as a real process: secret key in HERMES_HOME, one-time link, local-only binding."""

from __future__ import annotations

import http.client
import re
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.helpers import clean_environ, run_hermes

LINK = re.compile(r"(http://127\.0\.0\.1:(\d+)/login\?token=[\w-]+)")


def _start(env, cwd, *args) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes", "web", "--port", "0", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "http://" in line:
            return process, "".join(lines)
    process.kill()
    raise AssertionError(f"hermes web did not print its address: {lines} {process.stderr.read()}")


def _stop(process: subprocess.Popen) -> str:
    process.terminate()
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err


def _get(url: str, cookie: str | None = None) -> http.client.HTTPResponse:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


@pytest.fixture
def env(hermes_home, workspace):
    return clean_environ(HERMES_HOME=str(hermes_home), HERMES_WORKSPACE=str(workspace))


def test_without_a_password_it_prints_a_link_that_works_once(env, hermes_home, tmp_path):
    process, output = _start(env, tmp_path)
    try:
        link, port = LINK.search(output).groups()
        first = _get(link)
        assert first.status == 302
        cookie = first.getheader("Set-Cookie").split(";", 1)[0]
        assert "HttpOnly" in first.getheader("Set-Cookie")
        home = _get(f"http://127.0.0.1:{port}/api/sessions", cookie)
        assert home.status == 200
        again = _get(link)
        assert again.status == 403
        assert _get(f"http://127.0.0.1:{port}/api/sessions").status == 401
    finally:
        err = _stop(process)
    token = link.rsplit("=", 1)[1]
    assert token not in err  # request lines are logged without the query string
    log_file = hermes_home / "hermes.log"
    assert token not in (log_file.read_text() if log_file.exists() else "")

    key_file = hermes_home / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    assert len(key) >= 32

    # A second start reuses the key (so cookies survive a restart) and makes a new link.
    process, output = _start(env, tmp_path)
    try:
        assert LINK.search(output).group(1) != link
    finally:
        _stop(process)
    assert key_file.read_text().strip() == key


def test_without_a_password_it_refuses_to_listen_beyond_localhost(env, tmp_path):
    result = run_hermes(["web", "--host", "0.0.0.0", "--port", "0"], env=env, cwd=tmp_path)
    assert result.returncode != 0
    assert "HERMES_WEB_PASSWORD" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_with_a_password_it_serves_the_login_form(env, tmp_path):
    password = "local password 123"
    env = {**env, "HERMES_WEB_PASSWORD": password}
    process, output = _start(env, tmp_path, "--host", "127.0.0.1")
    try:
        assert "token=" not in output
        port = re.search(r":(\d+)/", output).group(1)
        assert _get(f"http://127.0.0.1:{port}/login").status == 200
        assert _get(f"http://127.0.0.1:{port}/api/sessions").status == 401
    finally:
        err = _stop(process)
    assert password not in output + err


def test_the_core_never_imports_flask(tmp_path):
    code = (
        "import sys, hermes.cli.main, hermes.cli.web_cmd, hermes.runtime, hermes.store; "
        "print('flask' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(tmp_path)
    )
    assert result.stdout.strip() == "False", result.stderr
