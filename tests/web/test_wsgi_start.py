"""`gunicorn wsgi:app` with the Procfile's settings fails closed with one line, no traceback."""

from __future__ import annotations

import http.client
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import clean_environ

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = shutil.which("gunicorn", path=str(Path(sys.executable).parent))
SECRET = "wsgi-test-secret-key-0123456789abcdef"

pytestmark = pytest.mark.skipif(GUNICORN is None, reason="gunicorn is not installed")


def _gunicorn(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [GUNICORN, "--config", "gunicorn.conf.py", "--bind", "127.0.0.1:0", "wsgi:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _refused(env: dict[str, str]) -> str:
    process = _gunicorn(env)
    try:
        _, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode != 0
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("hermes web: error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def env(hermes_home, workspace):
    return clean_environ(HERMES_HOME=str(hermes_home), HERMES_WORKSPACE=str(workspace))


def test_no_secret_key_refuses_with_one_line(env):
    line = _refused({**env, "HERMES_WEB_PASSWORD": "pw"})
    assert "FLASK_SECRET_KEY" in line


def test_no_password_refuses_with_one_line(env):
    line = _refused({**env, "FLASK_SECRET_KEY": SECRET})
    assert "HERMES_WEB_PASSWORD" in line and "HERMES_WEB_ALLOW_NO_AUTH=true" in line
    assert SECRET not in line


def test_with_both_it_serves(env):
    process = _gunicorn({**env, "FLASK_SECRET_KEY": SECRET, "HERMES_WEB_PASSWORD": "pw"})
    try:
        port = None
        deadline = time.monotonic() + 90
        seen = []
        while time.monotonic() < deadline and port is None:
            line = process.stderr.readline()
            seen.append(line)
            found = re.search(r"Listening at: http://127\.0\.0\.1:(\d+)", line)
            port = found and found.group(1)
        assert port, "".join(seen)
        body = None
        while time.monotonic() < deadline and body is None:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10)
                connection.request("GET", "/healthz")
                body = connection.getresponse().read()
            except OSError:
                time.sleep(0.2)
        assert body == b'{"status":"ok","db":"ok"}\n'
    finally:
        process.terminate()
        process.communicate(timeout=60)
