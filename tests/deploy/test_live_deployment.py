"""The deployment as it runs: the Procfile's web line under gunicorn, checked from outside.

`hermes doctor --url` passes against the real dashboard; a dashboard whose
HERMES_HOME would not survive a redeploy says so in its log and on the page.
"""

from __future__ import annotations

import httpx
import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import clean_environ, run_hermes
from tests.web.gunicorn_server import API_KEY, PASSWORD, SECRET_KEY, GunicornServer


@pytest.fixture
def fake():
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def make_server(fake, tmp_path):
    started = []

    def make(**env: str) -> GunicornServer:
        home, workspace = tmp_path / "home", tmp_path / "workspace"
        home.mkdir(exist_ok=True)
        workspace.mkdir(exist_ok=True)
        server = GunicornServer(home, workspace, fake.env("anthropic", api_key=API_KEY), **env)
        started.append(server.start())
        return server

    yield make
    for server in started:
        server.stop()


def test_procfile_line_serves_healthz_and_passes_doctor_url(make_server, tmp_path):
    server = make_server()
    health = httpx.get(server.url + "/healthz", timeout=10)
    assert health.status_code == 200 and health.json() == {"status": "ok", "db": "ok"}
    result = run_hermes(["doctor", "--url", server.url], env=clean_environ(), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("health", "tls", "headers", "cookie", "login gate", "streaming"):
        assert f"ok    {name}" in result.stdout, result.stdout
    for secret in (PASSWORD, SECRET_KEY, API_KEY):
        assert secret not in result.stdout + result.stderr + server.output()


def test_stream_route_sends_lines_apart_and_needs_no_login(make_server):
    server = make_server()
    arrivals = []
    with httpx.stream("GET", server.url + "/healthz/stream", timeout=10) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        assert response.headers["x-accel-buffering"] == "no"
        for line in response.iter_lines():
            if line:
                arrivals.append(line)
    assert len(arrivals) == 3


def test_railway_without_a_volume_warns_in_the_log_and_on_the_page(make_server):
    server = make_server(RAILWAY_ENVIRONMENT="production")
    assert "not on a Railway volume" in server.output()
    client = server.client()
    page = client.http.get("/").text
    assert "not on a Railway volume" in page


def test_railway_with_its_volume_does_not_warn(make_server, tmp_path):
    server = make_server(RAILWAY_ENVIRONMENT="production", RAILWAY_VOLUME_MOUNT_PATH=str(tmp_path))
    assert "Railway volume" not in server.output()
