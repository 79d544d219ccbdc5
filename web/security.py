"""Browser-facing defences that apply to every request: headers, cookies, CSRF, cross-site.

* Every response carries a strict Content-Security-Policy, ``nosniff`` and a
  same-origin Referrer-Policy, so an injected script has nowhere to run or
  report to.
* The session cookie is HttpOnly and SameSite=Lax, and Secure whenever the
  request came over HTTPS (directly, or through a trusted proxy's
  X-Forwarded-Proto; see ProxyFix in ``web/__init__.py``).
* Every state-changing request (POST/PUT/PATCH/DELETE) must be same-origin by
  its Origin and Sec-Fetch-Site headers, and carry the session's CSRF token in
  ``X-CSRF-Token`` (or the ``csrf_token`` form field of the login form),
  compared in constant time.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from flask import Flask, request, session
from flask.sessions import SecureCookieSessionInterface

from web.context import ApiError

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
_CSRF_KEY = "csrf"


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, Secure exactly when this request is HTTPS."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return bool(request and request.is_secure)


def csrf_token() -> str:
    """This browser session's CSRF token, created on first use."""
    token = session.get(_CSRF_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        session[_CSRF_KEY] = token
    return token


def new_csrf_token() -> str:
    """A fresh token (at login, so a token seen before login is worth nothing after)."""
    session[_CSRF_KEY] = secrets.token_urlsafe(32)
    return session[_CSRF_KEY]


def refuse_cross_site() -> None:
    """403 for a state-changing request that a browser says came from another site.

    The Origin's host must be this request's Host. (Its scheme is not compared:
    behind a TLS proxy the app sees http while the browser says https.)"""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        raise ApiError(403, "cross_site", "Cross-site requests are refused.")
    origin = request.headers.get("Origin")
    if origin is None:
        return
    if origin == "null" or urlsplit(origin).netloc.lower() != request.host.lower():
        raise ApiError(
            403,
            "cross_site",
            "Cross-site requests are refused. (Behind a reverse proxy? It must pass the "
            "Host header on, or set HERMES_TRUSTED_PROXIES so X-Forwarded-Host counts.)",
        )


def check_csrf() -> None:
    """403 unless the request carries this session's CSRF token."""
    expected = session.get(_CSRF_KEY)
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.mimetype in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        sent = request.form.get(CSRF_FIELD)
    if not isinstance(expected, str) or not expected or not sent:
        raise ApiError(
            403, "csrf_failed", f"Missing CSRF token: send the page's token in {CSRF_HEADER}."
        )
    if not hmac.compare_digest(sent.encode("utf-8", "replace"), expected.encode("utf-8")):
        raise ApiError(
            403, "csrf_failed", "The CSRF token does not match; reload the page and try again."
        )


def add_security_headers(response):
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response


def init_app(app: Flask) -> None:
    """Cookie settings, the security headers and the csrf_token template variable."""
    app.session_interface = SessionInterface()
    app.config.update(
        SESSION_COOKIE_NAME="hermes_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # The cookie is re-sent when the session changes, which the gate does every 30 s of
        # use (web/auth.py), not on every response: a script or a stylesheet answers without
        # re-signing the cookie and without a Set-Cookie a cache would have to skip.
        SESSION_REFRESH_EACH_REQUEST=False,
    )
    app.after_request(add_security_headers)

    @app.context_processor
    def _csrf_in_templates():
        return {"csrf_token": csrf_token()}
