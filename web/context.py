"""What every view needs: the shared Runtime, one API error type, checked JSON bodies.

Views stay thin: they parse input with :func:`json_body` / :func:`query_int`,
call the core through :func:`get_runtime`, and raise :class:`ApiError` (or let
a ``HermesError`` through) for the error handler in ``web.errors`` to shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import current_app, request
from werkzeug.routing import IntegerConverter

if TYPE_CHECKING:
    from hermes.runtime import Runtime


class ApiError(Exception):
    """A failure with its HTTP status, a stable ``code`` and a message for the user.

    ``extra`` fields (``field``, ``turn_id``, ...) are added to the JSON error.
    """

    def __init__(self, status: int, code: str, message: str, **extra: Any):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra


def get_runtime() -> Runtime:
    """The one Runtime of this app (built by ``create_app``, shared by all threads)."""
    return current_app.extensions["hermes.runtime"]


# JSON types by the names used in the schemas below.
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "list": (list,),
    "object": (dict,),
    "string|list": (str, list),
}


def json_body(
    required: dict[str, str] | None = None, optional: dict[str, str] | None = None
) -> dict[str, Any]:
    """The request's JSON object, checked against ``{field: type name}`` schemas.

    Unknown fields are refused (a typo should not silently do nothing), as are
    missing required fields and values of the wrong type; each error names the
    field at fault. ``None`` for an optional field counts as left out.
    """
    required = required or {}
    optional = optional or {}
    if not request.is_json:
        raise ApiError(
            400, "invalid_json", "Send a JSON object with Content-Type: application/json."
        )
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_json", "The request body must be a JSON object.")
    for name in data:
        if name not in required and name not in optional:
            raise ApiError(400, "invalid", f"Unknown field {name!r}.", field=name)
    body: dict[str, Any] = {}
    for name, kind in {**required, **optional}.items():
        value = data.get(name)
        if value is None:
            if name in required:
                raise ApiError(400, "invalid", f"Field {name!r} is required.", field=name)
            continue
        if not _is(value, kind):
            raise ApiError(400, "invalid", f"Field {name!r} must be a {kind}.", field=name)
        body[name] = value
    return body


def optional_json_body(optional: dict[str, str]) -> dict[str, Any]:
    """Like :func:`json_body` for a request whose body may be left out altogether."""
    if not request.content_length and not request.is_json:
        return {}
    return json_body(optional=optional)


def _is(value: Any, kind: str) -> bool:
    types = _TYPES[kind]
    if isinstance(value, bool) and bool not in types:
        return False  # JSON true is not the integer 1
    return isinstance(value, types)


def query_int(
    name: str, default: int | None, *, minimum: int = 1, maximum: int | None = None
) -> int | None:
    """An integer query parameter, or ``default``; 400 naming the parameter when malformed."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(
            400, "invalid", f"Query parameter {name!r} must be a whole number.", field=name
        ) from None
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f"at least {minimum}" + (f" and at most {maximum}" if maximum else "")
        raise ApiError(400, "invalid", f"Query parameter {name!r} must be {bounds}.", field=name)
    return value


class IdConverter(IntegerConverter):
    """``<id:name>``: a positive database id; anything else (0, -1, 30 digits) is a plain 404.

    The pattern alone does the refusing (at most 18 digits always fits SQLite's
    INTEGER): a min/max check in ``to_python`` makes Werkzeug answer 405 instead.
    """

    regex = r"[1-9][0-9]{0,17}"
