"""`hermes doctor --url URL`: check a running deployment from the outside.

It asks what a browser and an attacker would see: the health route, TLS, the
security headers and cookie flags the login page sends, that the API refuses
a stranger, and that a streamed response arrives line by line (a buffering
proxy would hold a turn's text back until the turn ends). It never logs in
and never sends a password.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterator
from http.cookies import SimpleCookie
from urllib.parse import urljoin, urlsplit

from hermes.cli.doctor_checks import Check

# What SPEC's dashboard sends; every directive must be there with these sources.
EXPECTED_CSP = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}
STREAM_PATH = "/healthz/stream"
# The stream route writes its lines this far apart; arriving together means buffering.
STREAM_MIN_SPREAD = 0.3
PROXY_FIX = (
    "Set HERMES_TRUSTED_PROXIES to the number of proxies in front of Hermes (1 for "
    "Railway, Caddy or nginx) so it sees the browser's HTTPS."
)


def url_checks(url: str, *, timeout: float = 10.0, verify: bool = True) -> Iterator[Check]:
    import httpx

    base = url if url.endswith("/") else url + "/"
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        yield Check("url", "fail", f"{url!r} is not an http(s) URL", "Pass e.g. https://host/")
        return
    https = parts.scheme == "https"
    with httpx.Client(timeout=timeout, verify=verify, follow_redirects=False) as client:
        try:
            health = client.get(urljoin(base, "healthz"))
        except httpx.ConnectError as exc:
            problem = str(exc) or type(exc).__name__
            if https and ("CERTIFICATE" in problem.upper() or "SSL" in problem.upper()):
                yield Check(
                    "tls",
                    "fail",
                    f"the certificate of {parts.hostname} is not trusted: {problem}"[:300],
                    "Use a certificate from a public CA (Caddy and Railway get one "
                    "automatically; certbot for nginx).",
                )
            else:
                yield Check(
                    "reachable",
                    "fail",
                    f"cannot connect to {base}: {problem}"[:300],
                    "Check the address, that the server runs, and the firewall.",
                )
            return
        except httpx.HTTPError as exc:
            yield Check(
                "reachable", "fail", f"{base}: {type(exc).__name__}: {exc}"[:300], "Check it runs."
            )
            return
        yield check_health(health)
        yield check_tls(parts.scheme, parts.hostname)
        login = client.get(urljoin(base, "login"))
        yield check_headers(login)
        yield check_cookie(login, https)
        yield check_anonymous_api(client.get(urljoin(base, "api/sessions")))
        yield check_stream(client, urljoin(base, STREAM_PATH.lstrip("/")))


def check_health(response) -> Check:
    fix = "Look at the server's log; /healthz answers 503 when the database cannot be read."
    if response.status_code != 200:
        return Check("health", "fail", f"/healthz answered {response.status_code}", fix)
    try:
        body = response.json()
    except ValueError:
        return Check("health", "fail", "/healthz did not answer JSON (is this Hermes?)", fix)
    if not isinstance(body, dict) or body.get("status") != "ok" or body.get("db") != "ok":
        return Check("health", "fail", f"/healthz answered {str(body)[:120]}", fix)
    return Check("health", "ok", "/healthz: status ok, db ok")


def check_tls(scheme: str, host: str) -> Check:
    if scheme == "https":
        return Check("tls", "ok", f"HTTPS with a trusted certificate for {host}")
    if _is_loopback(host):
        return Check("tls", "ok", f"plain HTTP on {host} (this machine only)")
    return Check(
        "tls",
        "fail",
        f"plain HTTP to {host}: the password and the session cookie cross the network readable",
        "Put Caddy or nginx with a certificate in front (README: deployment), or use "
        "Railway's HTTPS domain.",
    )


def check_headers(response) -> Check:
    fix = (
        "Serve Hermes' own responses unchanged: a proxy or CDN in front must not drop or "
        "rewrite Content-Security-Policy, X-Content-Type-Options or Referrer-Policy."
    )
    problems = []
    csp = _parse_csp(response.headers.get("content-security-policy", ""))
    for directive, sources in EXPECTED_CSP.items():
        if csp.get(directive) != sources:
            problems.append(f"CSP {directive} is {csp.get(directive) or 'missing'}")
    if response.headers.get("x-content-type-options", "").lower() != "nosniff":
        problems.append("X-Content-Type-Options is not nosniff")
    if response.headers.get("referrer-policy", "").lower() != "same-origin":
        problems.append("Referrer-Policy is not same-origin")
    if problems:
        return Check("headers", "fail", "; ".join(problems[:4]), fix)
    return Check("headers", "ok", "CSP, nosniff and Referrer-Policy as expected")


def check_cookie(response, https: bool) -> Check:
    raw = response.headers.get_list("set-cookie")
    if not raw:
        return Check(
            "cookie",
            "warn",
            "the login page set no cookie, so its flags cannot be checked",
            "Open /login in a browser and check the cookie's HttpOnly, SameSite and Secure flags.",
        )
    jar = SimpleCookie()
    for line in raw:
        jar.load(line)
    problems = []
    for name, morsel in jar.items():
        if not morsel["httponly"]:
            problems.append(f"{name} is not HttpOnly")
        if morsel["samesite"].lower() not in ("lax", "strict"):
            problems.append(f"{name} has SameSite={morsel['samesite'] or 'unset'}")
        if https and not morsel["secure"]:
            problems.append(f"{name} lacks Secure: the app did not see that the request was HTTPS")
    if problems:
        secure_only = all("Secure" in p for p in problems)
        fix = PROXY_FIX if secure_only else "Serve Hermes' own Set-Cookie headers unchanged."
        return Check("cookie", "fail", "; ".join(problems[:3]), fix)
    flags = "HttpOnly, SameSite" + (", Secure" if https else "")
    return Check("cookie", "ok", f"session cookie {flags}")


def check_anonymous_api(response) -> Check:
    if response.status_code == 401:
        return Check("login gate", "ok", "/api/sessions refuses an anonymous request (401)")
    return Check(
        "login gate",
        "fail",
        f"/api/sessions answered {response.status_code} to a request without login",
        "Set HERMES_WEB_PASSWORD and unset HERMES_WEB_ALLOW_NO_AUTH on anything reachable "
        "from the internet.",
    )


def check_stream(client, url: str) -> Check:
    import httpx

    fix = (
        "Turn off response buffering for Hermes in the proxy (nginx: proxy_buffering off; "
        "Caddy: flush_interval -1; see deploy/) and do not compress application/x-ndjson."
    )
    arrivals: list[float] = []
    try:
        with client.stream("GET", url) as response:
            if response.status_code != 200:
                return Check(
                    "streaming", "fail", f"{STREAM_PATH} answered {response.status_code}", fix
                )
            for line in response.iter_lines():
                if line.strip():
                    arrivals.append(time.monotonic())
    except httpx.HTTPError as exc:
        return Check("streaming", "fail", f"{STREAM_PATH}: {type(exc).__name__}: {exc}"[:300], fix)
    if len(arrivals) < 2:
        return Check("streaming", "fail", f"{STREAM_PATH} sent {len(arrivals)} lines", fix)
    spread = arrivals[-1] - arrivals[0]
    if spread < STREAM_MIN_SPREAD:
        return Check(
            "streaming",
            "fail",
            f"{len(arrivals)} lines written over ~1 s arrived within {spread * 1000:.0f} ms: "
            "something in between buffers the stream",
            fix,
        )
    return Check(
        "streaming", "ok", f"NDJSON lines arrive as written ({spread * 1000:.0f} ms spread)"
    )


def _parse_csp(header: str) -> dict[str, str]:
    directives = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = " ".join(words[1:])
    return directives


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
