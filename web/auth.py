"""The password gate: /login, /logout, and the check in front of every other route.

The gate is an app-wide ``before_request`` hook, so a route added later (by any
blueprint) is private unless it is listed in ``PUBLIC_ENDPOINTS``: anonymous
``/api/*`` requests get 401, pages redirect to ``/login``. ``login_required``
says the same thing on a single view, for readers and for views mounted
outside this app.

Three ways to be let in, chosen once at start:

* ``password``: HERMES_WEB_PASSWORD, compared in constant time; failed logins
  are counted per client address by flask-limiter (5 per 5 minutes, then 429
  with Retry-After until the window passes).
* ``open``: no password and HERMES_WEB_ALLOW_NO_AUTH=true; every visitor is in.
* ``token``: ``hermes web`` without a password; a one-time link
  (``/login?token=...``) sets the cookie once, then the token is dead.

A login lapses after HERMES_WEB_SESSION_IDLE_MINUTES without a request.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import secrets
import threading
import time
from urllib.parse import quote, urlsplit

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    g,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from web import security
from web.context import ApiError, get_runtime
from web.errors import is_api_request
from web.logouts import LOGOUTS_FILE, Logouts

bp = Blueprint("auth", __name__)
log = logging.getLogger("hermes.web.auth")

PUBLIC_ENDPOINTS = frozenset({"auth.login", "health.healthz", "health.healthz_stream", "static"})
LOGIN_LIMIT = "5 per 5 minutes"

_AUTH_KEY = "auth"
_SEEN_KEY = "seen"
_LOGIN_KEY = "login"


# ---- who is logged in ------------------------------------------------------


def auth_mode(app: Flask | None = None) -> str:
    return (app or current_app).config["HERMES_AUTH_MODE"]


def _fingerprint() -> str:
    """What a logged-in cookie holds: changes when the password (or mode) changes,
    so changing HERMES_WEB_PASSWORD logs every browser out."""
    config = get_runtime().config
    secret = (config.secret_key or "").encode()
    material = f"{auth_mode()}:{config.web_password or ''}".encode()
    return hmac.new(secret, material, hashlib.sha256).hexdigest()[:32]


def is_logged_in() -> bool:
    """Whether this request belongs to a logged-in browser (idle logins lapse here)."""
    if auth_mode() == "open":
        return True
    if session.get(_AUTH_KEY) != _fingerprint():
        return False
    if current_app.extensions["hermes.logouts"].ended(session.get(_LOGIN_KEY)):
        # A request that was in flight during the logout sent this cookie back; it stays dead.
        session.clear()
        return False
    idle = current_app.config["HERMES_SESSION_IDLE_SECONDS"]
    seen = session.get(_SEEN_KEY)
    now = time.time()
    if not isinstance(seen, int | float) or now - seen > idle:
        session.clear()
        return False
    if now - seen > 30:  # refresh now and then, not on every request
        session[_SEEN_KEY] = now
    return True


def _log_in() -> None:
    session.clear()  # nothing from before the login survives it
    session.permanent = True
    session[_AUTH_KEY] = _fingerprint()
    session[_SEEN_KEY] = time.time()
    session[_LOGIN_KEY] = secrets.token_urlsafe(16)
    security.new_csrf_token()


def _refuse_anonymous():
    if is_api_request():
        raise ApiError(401, "login_required", "Log in first: POST /login with the password.")
    return redirect(url_for("auth.login", next=_safe_next(_current_path())))


def login_required(view):
    """Refuse anonymous requests to ``view`` (the app-wide gate already does; this documents it)."""

    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        if not is_logged_in():
            return _refuse_anonymous()
        return view(*args, **kwargs)

    return wrapper


def gate():
    """Before every request: login, then same-origin, then the CSRF token."""
    if request.endpoint not in PUBLIC_ENDPOINTS and not is_logged_in():
        return _refuse_anonymous()
    if request.method in security.UNSAFE_METHODS:
        security.refuse_cross_site()
        security.check_csrf()
    return None


def _safe_next(target: object) -> str:
    """A path on this site to go to after login; anything else is ``/``.

    Browsers forgive a lot in a Location header: they drop tabs and newlines
    (``/\t/evil.example`` becomes ``//evil.example``, another host) and read
    ``\\`` as ``/``, and a newline in a header is a 500. So the target must be
    plain printable text, start with exactly one ``/``, and parse as a bare
    path (no scheme, no host) as it is, nothing stripped first.
    """
    if not isinstance(target, str) or not target.startswith("/") or target.startswith("//"):
        return "/"
    if "\\" in target or any(char.isspace() or not char.isprintable() for char in target):
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.startswith("/"):
        return "/"
    return target.rstrip("?") or "/"


def _current_path() -> str:
    """This request's path and query, as the browser sent them (still %-encoded)."""
    path = quote(request.path, safe="/:@!$&'()*+,;=-._~")
    query = request.query_string.decode("latin-1")
    return f"{path}?{query}" if query else path


# ---- one-time login links ---------------------------------------------------


class LoginTokens:
    """One-time login tokens (``hermes web`` without a password). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._digests: set[bytes] = set()

    def issue(self) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._digests.add(hashlib.sha256(token.encode()).digest())
        return token

    def redeem(self, token: str) -> bool:
        digest = hashlib.sha256(token.encode("utf-8", "replace")).digest()
        with self._lock:
            # Comparing digests of equal length: no timing hint about the token.
            for known in self._digests:
                if hmac.compare_digest(known, digest):
                    self._digests.discard(known)
                    return True
        return False


def issue_login_token(app: Flask) -> str:
    """Switch ``app`` to one-time-link logins and return a fresh token for a link."""
    app.config["HERMES_AUTH_MODE"] = "token"
    return app.extensions["hermes.login_tokens"].issue()


# ---- views -----------------------------------------------------------------


def _password_matches(sent: str) -> bool:
    expected = get_runtime().config.web_password or ""
    # Digests have one length, so the comparison takes the same time for any input.
    return bool(expected) and hmac.compare_digest(
        hashlib.sha256(sent.encode("utf-8", "replace")).digest(),
        hashlib.sha256(expected.encode("utf-8")).digest(),
    )


@bp.route("/login", methods=["GET", "POST"])
def login():
    """The login form; POST checks the password and sets the session cookie."""
    mode = auth_mode()
    if request.method == "GET":
        token = request.args.get("token")
        if token is not None and mode == "token":
            if current_app.extensions["hermes.login_tokens"].redeem(token):
                _log_in()
                return redirect("/")
            return _login_page("This login link was already used or is not valid.", 403, True)
        if is_logged_in():
            return redirect(_next_page())
        return _login_page(None, 200)
    if mode != "password":
        return _login_page(_no_password_message(mode), 400)
    password = request.form.get("password", "")
    if not _password_matches(password):
        g.login_failed = True  # counted by the limiter (see init_app)
        log.info("failed login from %s", request.remote_addr)
        return _login_page("Wrong password.", 401)
    _log_in()
    return redirect(_next_page())


def _next_page() -> str:
    """Where the login was going: the form's hidden ``next`` field, else ``?next=``."""
    return _safe_next(request.form.get("next") or request.args.get("next"))


def _no_password_message(mode: str) -> str:
    if mode == "token":
        return "Use the one-time login link that `hermes web` printed."
    return "No password is set, so there is nothing to log in with."


def _login_page(error: str | None, status: int, link_used: bool = False):
    return (
        render_template(
            "login.html",
            error=error,
            login_link_used=link_used,
            auth_mode=auth_mode(),
            next_page=_next_page(),
        ),
        status,
    )


def _locked_out(limit) -> Response:
    """The 429 of the lockout as the login page (the limiter adds Retry-After)."""
    log.warning("login locked out for %s after repeated failures", request.remote_addr)
    message = "Too many failed logins from your address; wait a few minutes and try again."
    return make_response(_login_page(message, 429))


@bp.route("/logout", methods=["POST"])
def logout():
    """Forget the login; pages go back to /login, API calls to 401.

    The login's id is remembered as ended, so a copy of the cookie (or one sent
    back by a request that was still running) cannot bring it back.
    """
    current_app.extensions["hermes.logouts"].end(session.get(_LOGIN_KEY))
    session.clear()
    if request.accept_mimetypes.best == "application/json":
        return {"status": "logged_out"}
    return redirect(url_for("auth.login"))


# ---- wiring ----------------------------------------------------------------


def init_app(app: Flask, config) -> None:
    """Register the blueprint, the gate and the failed-login limiter on ``app``."""
    app.config.setdefault("HERMES_AUTH_MODE", "password" if config.web_password else "open")
    app.config.setdefault("HERMES_SESSION_IDLE_SECONDS", config.web_session_idle_minutes * 60)
    app.config["PERMANENT_SESSION_LIFETIME"] = app.config["HERMES_SESSION_IDLE_SECONDS"]
    app.extensions["hermes.login_tokens"] = LoginTokens()
    app.extensions["hermes.logouts"] = Logouts(
        config.home / LOGOUTS_FILE, app.config["HERMES_SESSION_IDLE_SECONDS"]
    )

    limiter = Limiter(
        key_func=get_remote_address,
        storage_uri=config.ratelimit_storage,
        headers_enabled=True,
        # The limiter's backend failing must not lock everyone out, nor let the gate open:
        # failed logins then go uncounted, which the log says.
        swallow_errors=True,
        strategy="moving-window",
    )
    limiter.init_app(app)
    # The only limit is the login's; the page's scripts and styles skip the limiter's lookup.
    limiter.request_filter(lambda: request.endpoint in ("static", "pages.asset"))
    app.extensions["hermes.limiter"] = limiter
    app.register_blueprint(bp)
    # Decorated here, not at import, so each app counts with its own limiter and storage.
    app.view_functions["auth.login"] = limiter.limit(
        LOGIN_LIMIT,
        methods=["POST"],
        deduct_when=lambda response: bool(g.get("login_failed")),
        on_breach=_locked_out,
    )(login)
    app.before_request(gate)
