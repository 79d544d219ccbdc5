"""The HTML views. Each renders ``templates/app.html`` with the view to open;
the page's scripts load the data through the JSON API. Reloading any page
shows the same view.

The chat view's first data (the sidebar's first page of sessions, and the open
session with its newest messages) rides in the HTML as a JSON data block, in the
very shape the API answers: a cold load paints without waiting for its scripts
to ask the server (see bench/bench_page.py). The block is never executed (its
type is ``application/json``, which the CSP does not govern) and Jinja's
``tojson`` escapes ``<``, ``>``, ``&`` and ``'``, so no stored text can close it."""

from __future__ import annotations

import gzip
import hashlib
import threading
import time
from pathlib import Path

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    render_template,
    request,
    send_from_directory,
    url_for,
)

from hermes.errors import ConfigError, HermesError
from hermes.skills.schema import validate_name
from web.context import get_runtime
from web.sessions import session_list_json, session_page_json

# What the page shows first; the same numbers as static/js/sessions.js and chat.js ask for.
BOOT_SESSIONS = 40
BOOT_MESSAGES = 40

bp = Blueprint("pages", __name__)


def _warnings() -> list[str]:
    """What the user should know before chatting: no model configured, profile entries withheld."""
    runtime = get_runtime()
    found = list(current_app.extensions.get("hermes.storage_warnings", ()))
    try:
        runtime.config.require_provider()
    except ConfigError as exc:
        found.append(exc.message)
    for target, _entry, reason in runtime.profile.flagged():
        found.append(f"A {target} profile entry is withheld from the model: {reason}.")
    return found


def _app_page(view: str, **context):
    context.setdefault("session_id", None)
    context.setdefault("message_id", None)
    context.setdefault("skill_name", None)
    context.setdefault("query", None)
    boot = _boot(context["session_id"] if view == "chat" else None)
    version = _asset_version()
    return render_template(
        "app.html",
        view=view,
        warnings=_warnings(),
        boot=boot,
        asset=lambda filename: url_for("pages.asset", version=version, filename=filename),
        **context,
    )


def _boot(session_id: int | None) -> dict:
    """The sidebar's first page and the open session's newest messages, as the API gives them."""
    boot = {"sessions": session_list_json(BOOT_SESSIONS)}
    if session_id is not None:
        boot["chat"] = session_page_json(session_id, BOOT_MESSAGES)
    return boot


@bp.get("/")
def dashboard():
    """The newest session, or a new chat when there is none."""
    latest = get_runtime().store.latest_session()
    session_id = latest.id if latest else None
    return _app_page("chat", session_id=session_id)


@bp.get("/sessions/<id:session_id>")
def session_page(session_id: int):
    try:
        get_runtime().store.get_session(session_id)
    except HermesError:
        abort(404)
    return _app_page("chat", session_id=session_id)


@bp.get("/memory")
def memory_page():
    return _app_page("memory", query=request.args.get("q", "")[:1000])


@bp.get("/skills")
def skills_page():
    return _app_page("skills")


@bp.get("/skills/<name>")
def skill_page(name: str):
    try:
        validate_name(name)
    except HermesError:
        abort(404)
    return _app_page("skills", skill_name=name)


# -- static files under a versioned address, cached for good --------------------------------
#
# The dashboard's scripts and styles are addressed as /static/v/<version>/..., where the version
# is a digest of every file under static/: a browser that has them keeps them for a year and
# asks nothing on the next visit (a bookmark, a new tab), and any change to any file gives new
# addresses. The modules import each other by relative paths, so the whole graph stays under one
# version. An address with another version (a page from before a deploy) gets today's file,
# not cached, so nothing stale is pinned.

ASSET_MAX_AGE = 365 * 24 * 3600
# A page load asks for a dozen files at once: the version is worked out once for all of them,
# and again at most this often, so an edited file still gets a new address within a second.
ASSET_VERSION_TTL = 1.0
_versions: dict[str, tuple[float, str]] = {}  # static folder -> (monotonic time, version)


def _asset_version() -> str:
    """A digest of the static files' names, sizes and modification times (a few stat calls)."""
    folder = current_app.static_folder or "static"
    now = time.monotonic()
    known = _versions.get(folder)
    if known is not None and now - known[0] < ASSET_VERSION_TTL:
        return known[1]
    root = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            info = path.stat()
            name = path.relative_to(root).as_posix()
            digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    version = digest.hexdigest()[:12]
    _versions[folder] = (now, version)
    return version


@bp.get("/static/v/<version>/<path:filename>")
def asset(version: str, filename: str):
    current = version == _asset_version()
    response = send_from_directory(
        current_app.static_folder or "static", filename, max_age=ASSET_MAX_AGE if current else 0
    )
    if current:
        response.cache_control.immutable = True
    else:
        response.cache_control.no_cache = True
    return response


# -- static scripts and styles, gzipped ---------------------------------------------------------
#
# The page's JavaScript and CSS are most of its first load (bench/bench_page.py counts it
# against 200 KB) and shrink to about a third gzipped. Proxies such as the Caddyfile's compress
# too, but a bare gunicorn (Railway, `hermes web`) must not send them raw. Only these files:
# they hold no secret, whereas compressing a page that holds the CSRF token next to text an
# attacker can vary (the ?q= of /memory) would open it to a BREACH-style size oracle.

_GZIP_TYPES = frozenset({"text/javascript", "application/javascript", "text/css"})
_gzipped: dict[str, tuple[str, bytes]] = {}  # static path -> (file ETag, gzipped body)
_gzip_lock = threading.Lock()


@bp.after_app_request
def _gzip_static(response: Response) -> Response:
    if (
        request.endpoint not in ("static", "pages.asset")
        or response.status_code != 200
        or response.mimetype not in _GZIP_TYPES
        or "Content-Encoding" in response.headers
    ):
        return response
    response.vary.add("Accept-Encoding")
    if not request.accept_encodings["gzip"]:
        return response
    etag, _weak = response.get_etag()
    raw = response.response  # the file's iterable (gunicorn's FileWrapper under gunicorn)
    with _gzip_lock:
        cached = _gzipped.get(request.path)
    if cached is None or cached[0] != etag:
        data = b"".join(raw)
        cached = (etag or "", gzip.compress(data, compresslevel=6, mtime=0))
        with _gzip_lock:
            _gzipped[request.path] = cached
    if hasattr(raw, "close"):
        raw.close()
    response.direct_passthrough = False
    response.set_data(cached[1])
    response.headers["Content-Encoding"] = "gzip"
    if etag:
        # The same file, another encoding: a weak tag still revalidates (If-None-Match
        # compares weakly) without claiming the bytes equal the raw file's.
        response.set_etag(etag, weak=True)
    return response
