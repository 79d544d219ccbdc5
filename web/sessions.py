"""``/api/sessions``: list, create, open (paged both ways), rename, delete, export.

The list never loads transcripts (a page of session rows and one query for
their running turns); one session's messages come a page at a time, newest
page first, so a 5,000-message session opens in one small response.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from hermes.errors import NotFound
from hermes.store.values import SessionInfo
from web import summaries
from web.context import ApiError, get_runtime, json_body, optional_json_body, query_int

bp = Blueprint("sessions", __name__, url_prefix="/api/sessions")

LIST_DEFAULT, LIST_MAX = 50, 200
PAGE_DEFAULT, PAGE_MAX = 100, 500
TITLE_MAX = 200
EXPORT_FORMATS = {"json": ("application/json", "json"), "markdown": ("text/markdown", "md")}


def session_json(info: SessionInfo, running_turn_id: str | None) -> dict:
    """SPEC's session fields plus ``running_turn_id`` and ``model`` (the session's own,
    else the model its next turn will use)."""
    return {
        **info.to_dict(),
        "model": info.model or get_runtime().model or None,
        "running_turn_id": running_turn_id,
    }


def _one_session_json(session_id: int) -> dict:
    store = get_runtime().store
    return session_json(store.get_session(session_id), store.running_turn(session_id))


def session_list_json(limit: int, before: str | None = None) -> dict:
    """One page of the session list, as ``GET /api/sessions`` answers it (the dashboard's
    HTML carries the first page too, so its sidebar needs no request)."""
    store = get_runtime().store
    page, cursor = store.list_sessions(limit=limit, before=before)
    running = store.running_turns([info.id for info in page])
    return {"sessions": [session_json(info, running.get(info.id)) for info in page], "next": cursor}


@bp.get("")
def list_sessions():
    limit = query_int("limit", LIST_DEFAULT, maximum=LIST_MAX)
    return session_list_json(limit, request.args.get("before") or None)


@bp.post("")
def create_session():
    """A new chat; the chat the user leaves gets its summary written in the background."""
    body = optional_json_body({"title": "string", "previous_session_id": "integer"})
    title = _clean_title(body["title"]) if "title" in body else None
    runtime = get_runtime()
    left = body.get("previous_session_id")
    if left is None:
        latest = runtime.store.latest_session()
        left = latest.id if latest else None
    info = runtime.store.create_session(title=title, source="web", model=runtime.model or None)
    if left is not None:
        summaries.summarize_in_background(runtime, left)
    response = jsonify({"session": session_json(info, None)})
    response.status_code = 201
    return response


@bp.get("/<id:session_id>")
def get_session(session_id: int):
    before = query_int("before", None)
    after = query_int("after", None)
    if before is not None and after is not None:
        raise ApiError(400, "invalid", "Pass either 'before' or 'after', not both.", field="after")
    limit = query_int("limit", PAGE_DEFAULT, maximum=PAGE_MAX)
    return session_page_json(session_id, limit, before=before, after=after)


def session_page_json(
    session_id: int, limit: int, *, before: int | None = None, after: int | None = None
) -> dict:
    """A session and one page of its messages, as ``GET /api/sessions/<id>`` answers it
    (the dashboard's HTML carries the newest page too, so opening it needs no request)."""
    store = get_runtime().store
    session = _one_session_json(session_id)
    try:
        messages, has_more = store.message_page(session_id, before=before, after=after, limit=limit)
    except NotFound as exc:
        raise ApiError(400, "invalid", exc.message, field="before" if before else "after") from None
    # Where the model's view was summarized: the page marks "earlier messages summarized"
    # after each through_message_id (compactions that only shortened tool output are left out).
    session["compactions"] = [c.to_dict() for c in store.compactions(session_id) if c.summary]
    return {
        "session": session,
        "messages": [stored.to_dict() for stored in messages],
        "has_more": has_more,
    }


@bp.patch("/<id:session_id>")
def rename_session(session_id: int):
    body = json_body(required={"title": "string"})
    store = get_runtime().store
    info = store.update_session(session_id, title=_clean_title(body["title"]))
    return {"session": session_json(info, store.running_turn(session_id))}


@bp.delete("/<id:session_id>")
def delete_session(session_id: int):
    store = get_runtime().store
    store.get_session(session_id)
    running = store.running_turn(session_id)
    if running:
        raise ApiError(
            409,
            "session_busy",
            "This session has a running turn; cancel it or wait for it to finish first.",
            turn_id=running,
        )
    store.delete_session(session_id)
    return Response(status=204)


@bp.get("/<id:session_id>/export")
def export_session(session_id: int):
    from hermes.store.exports import session_to_dict, session_to_markdown

    fmt = request.args.get("format", "json")
    if fmt not in EXPORT_FORMATS:
        raise ApiError(400, "invalid", "format must be json or markdown.", field="format")
    store = get_runtime().store
    info = store.get_session(session_id)
    messages = list(store.iter_messages(session_id))
    mimetype, extension = EXPORT_FORMATS[fmt]
    if fmt == "json":
        response = jsonify(session_to_dict(info, messages))
    else:
        response = Response(session_to_markdown(info, messages), mimetype=mimetype)
    response.headers["Content-Disposition"] = (
        f'attachment; filename="hermes-session-{session_id}.{extension}"'
    )
    return response


def _clean_title(raw: str) -> str:
    title = " ".join(raw.split())
    if not title:
        raise ApiError(400, "invalid", "The title must not be empty.", field="title")
    if len(title) > TITLE_MAX:
        raise ApiError(
            400, "invalid", f"The title must be at most {TITLE_MAX} characters.", field="title"
        )
    return title
