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

from flask import Blueprint, abort, current_app, render_template, request

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
    return render_template("app.html", view=view, warnings=_warnings(), boot=boot, **context)


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
