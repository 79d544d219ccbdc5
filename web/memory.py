"""``/api/memory``: search every conversation; read and edit the profile memory."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, request

from hermes.guard import scan
from hermes.profile import FILES
from web.context import ApiError, get_runtime, json_body, query_int

bp = Blueprint("memory", __name__, url_prefix="/api/memory")

SEARCH_DEFAULT, SEARCH_MAX = 20, 100
QUERY_MAX = 1000
ROLES = ("user", "assistant", "tool", "summary")


@bp.get("/search")
def search():
    """SPEC's hits, best first; filters ``session``, ``role``, ``since``, ``until`` (ISO dates)."""
    query = request.args.get("q", "")
    if len(query) > QUERY_MAX:
        raise ApiError(400, "invalid", f"q must be at most {QUERY_MAX} characters.", field="q")
    limit = query_int("limit", SEARCH_DEFAULT, maximum=SEARCH_MAX)
    session_id = query_int("session", None, maximum=2**63 - 1)
    role = request.args.get("role") or None
    if role is not None and role not in ROLES:
        raise ApiError(400, "invalid", f"role must be one of {', '.join(ROLES)}.", field="role")
    since = _date("since")
    until = _date("until", end_of_day=True)
    if not query.strip():
        return {"results": []}
    hits = get_runtime().store.search(
        query, limit=limit, session_id=session_id, role=role, since=since, until=until
    )
    return {"results": [hit.to_dict() for hit in hits]}


def _date(name: str, *, end_of_day: bool = False) -> datetime | None:
    """An ISO date (``2026-01-31``) or date-time; a bare date as ``until`` includes that day."""
    raw = request.args.get(name)
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        if end_of_day and len(raw) == 10:
            moment = moment.replace(hour=23, minute=59, second=59, microsecond=999_999)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        # In UTC now: 0001-01-01T00:00+05:00 is before year 1 there (OverflowError).
        return moment.astimezone(UTC)
    except ValueError:
        raise ApiError(
            400, "invalid", f"{name} must be an ISO date such as 2026-01-31.", field=name
        ) from None
    except OverflowError:
        raise ApiError(
            400,
            "invalid",
            f"{name} is outside the range of dates (years 1-9999 in UTC).",
            field=name,
        ) from None


def _profile_json() -> dict:
    profile = get_runtime().profile
    result = {}
    for target in FILES:
        used, limit = profile.usage(target)
        entries = profile.entries(target)
        result[target] = {
            "file": FILES[target],
            "text": profile.read(target),
            "entries": [{"text": entry, "flags": scan(entry)} for entry in entries],
            "used": used,
            "limit": limit,
        }
    return {"profile": result}


@bp.get("/profile")
def get_profile():
    """Both profile files, each entry with the guard's flags (flagged ones are withheld)."""
    return _profile_json()


@bp.put("/profile")
def put_profile():
    """Replace USER.md and/or MEMORY.md: ``{"user"?: str, "memory"?: str}``.

    Both are checked against their limits before either is written."""
    body = json_body(optional={"user": "string", "memory": "string"})
    if not body:
        raise ApiError(400, "invalid", "Send 'user' and/or 'memory' text.", field="user")
    profile = get_runtime().profile
    for target, text in body.items():
        limit = profile.limits[target]
        if len(text.replace("\r\n", "\n").strip()) > limit:
            raise ApiError(
                400,
                "invalid",
                f"{FILES[target]} would be {len(text):,} characters; the limit is {limit:,}.",
                field=target,
            )
    for target, text in body.items():
        profile.write(target, text)
    return _profile_json()
