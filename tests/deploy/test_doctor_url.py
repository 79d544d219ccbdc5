"""`hermes doctor --url`: each check passes against a well-behaved server and fails against
one that gets exactly that thing wrong.

The servers here are real HTTP servers on 127.0.0.1 (stdlib), so httpx, TLS
and chunked streaming behave as they do against a deployment.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hermes.cli.doctor_url import EXPECTED_CSP, url_checks
from tests.helpers import clean_environ, run_hermes

GOOD_CSP = "; ".join(f"{k} {v}" for k, v in EXPECTED_CSP.items())


class Behaviour:
    """What the fake deployment does; each test breaks one thing."""

    def __init__(self, **changes):
        self.health_status = 200
        self.health_body = {"status": "ok", "db": "ok"}
        self.csp = GOOD_CSP
        self.nosniff = True
        self.cookie = "session=abc; HttpOnly; SameSite=Lax; Path=/"
        self.api_status = 401
        self.stream_gap = 0.25
        self.stream_buffered = False
        self.__dict__.update(changes)


def make_handler(behaviour: Behaviour):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_body(self, status, body: bytes, content_type="application/json", extra=()):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in extra:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            b = behaviour
            if self.path == "/healthz":
                self.send_body(b.health_status, json.dumps(b.health_body).encode())
            elif self.path == "/login":
                headers = [("Content-Security-Policy", b.csp), ("Referrer-Policy", "same-origin")]
                if b.nosniff:
                    headers.append(("X-Content-Type-Options", "nosniff"))
                if b.cookie:
                    headers.append(("Set-Cookie", b.cookie))
                self.send_body(200, b"<html>login</html>", "text/html", headers)
            elif self.path == "/api/sessions":
                self.send_body(b.api_status, b'{"error": {"code": "x", "message": "y"}}')
            elif self.path == "/healthz/stream":
                lines = [json.dumps({"type": "ping", "n": n}).encode() + b"\n" for n in range(3)]
                if b.stream_buffered:
                    time.sleep(b.stream_gap * 2)
                    self.send_body(200, b"".join(lines), "application/x-ndjson")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for n, line in enumerate(lines):
                    if n:
                        time.sleep(b.stream_gap)
                    self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.send_body(404, b"{}")

    return Handler


@pytest.fixture
def serve():
    servers = []

    def start(behaviour: Behaviour, tls: ssl.SSLContext | None = None) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(behaviour))
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        scheme = "https" if tls else "http"
        return f"{scheme}://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def verdicts(url: str, **kwargs) -> dict[str, str]:
    return {check.name: check.status for check in url_checks(url, **kwargs)}


def details(url: str) -> dict[str, object]:
    return {check.name: check for check in url_checks(url)}


def test_a_well_behaved_deployment_passes_every_check(serve):
    url = serve(Behaviour())
    assert verdicts(url) == {
        "health": "ok",
        "tls": "ok",
        "headers": "ok",
        "cookie": "ok",
        "login gate": "ok",
        "streaming": "ok",
    }


def test_unhealthy(serve):
    assert verdicts(serve(Behaviour(health_status=503)))["health"] == "fail"
    assert (
        verdicts(serve(Behaviour(health_body={"status": "ok", "db": "error"})))["health"] == "fail"
    )


def test_missing_or_weakened_headers(serve):
    weaker = GOOD_CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
    check = details(serve(Behaviour(csp=weaker)))["headers"]
    assert check.status == "fail" and "script-src" in check.detail
    assert verdicts(serve(Behaviour(nosniff=False)))["headers"] == "fail"


def test_cookie_flags(serve):
    check = details(serve(Behaviour(cookie="session=abc; Path=/")))["cookie"]
    assert check.status == "fail" and "HttpOnly" in check.detail
    assert verdicts(serve(Behaviour(cookie="")))["cookie"] == "warn"


def test_open_api(serve):
    check = details(serve(Behaviour(api_status=200)))["login gate"]
    assert check.status == "fail" and "HERMES_WEB_PASSWORD" in check.fix


def test_buffered_stream(serve):
    check = details(serve(Behaviour(stream_buffered=True)))["streaming"]
    assert check.status == "fail" and "buffers" in check.detail and "proxy_buffering" in check.fix


def test_plain_http_to_another_host_fails_tls():
    from hermes.cli.doctor_url import check_tls

    assert check_tls("http", "hermes.example.com").status == "fail"
    assert check_tls("http", "127.0.0.1").status == "ok"
    assert check_tls("http", "::1").status == "ok"


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> ssl.SSLContext:
    folder: Path = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        capture_output=True,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip("openssl could not make a certificate")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def test_untrusted_certificate_fails_tls(serve, self_signed):
    url = serve(Behaviour(), tls=self_signed)
    checks = list(url_checks(url))
    assert [c.name for c in checks] == ["tls"]
    assert checks[0].status == "fail" and "not trusted" in checks[0].detail


def test_https_cookie_without_secure_points_at_the_proxy_setting(serve, self_signed):
    url = serve(Behaviour(), tls=self_signed)
    check = {c.name: c for c in url_checks(url, verify=False)}["cookie"]
    assert check.status == "fail" and "HERMES_TRUSTED_PROXIES" in check.fix
    secure = serve(Behaviour(cookie="s=1; HttpOnly; Secure; SameSite=Lax"), tls=self_signed)
    assert {c.name: c.status for c in url_checks(secure, verify=False)}["cookie"] == "ok"


def test_nothing_listening(tmp_path):
    checks = list(url_checks("http://127.0.0.1:9/"))
    assert checks[0].name == "reachable" and checks[0].status == "fail"
    assert [c.name for c in url_checks("ftp://x")] == ["url"]


def test_doctor_url_command_exits_non_zero_on_a_failure(serve, tmp_path):
    bad = serve(Behaviour(api_status=200))
    result = run_hermes(["doctor", "--url", bad], env=clean_environ(), cwd=tmp_path)
    assert result.returncode == 1
    assert "login gate" in result.stdout and "Traceback" not in result.stderr
    good = serve(Behaviour())
    result = run_hermes(["doctor", "--url", good], env=clean_environ(), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed." in result.stdout
