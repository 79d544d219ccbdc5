"""One error handler for the whole app.

Under ``/api/`` every failure, ours or Werkzeug's, becomes SPEC's JSON error
``{"error": {"code", "message", ...}}`` with a fitting status: never an HTML
page, never a traceback. Pages get a short plain-text error instead. An
unexpected exception is logged (with its traceback, to HERMES_HOME/hermes.log)
and answered with a message that gives nothing away.
"""

from __future__ import annotations

import logging

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from hermes.errors import (
    Cancelled,
    ConfigError,
    Conflict,
    HermesError,
    InvalidInput,
    NotFound,
    ProviderError,
)
from web.context import ApiError

log = logging.getLogger("hermes.web")

# Werkzeug's names for statuses, as stable snake_case codes.
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    410: "gone",
    413: "too_large",
    415: "unsupported_media_type",
    429: "too_many_requests",
}

_HTTP_MESSAGES = {
    404: "There is nothing at this address.",
    405: "This address does not accept that method.",
    413: "The request body is too large.",
    429: "Too many attempts; wait and try again.",
}


def hermes_status(exc: HermesError) -> int:
    """The HTTP status of one of the core's errors."""
    if getattr(exc, "code", "") == "session_busy":
        return 409
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Conflict):
        return 409
    if isinstance(exc, InvalidInput):
        return 400
    if isinstance(exc, ProviderError):
        return 502
    if isinstance(exc, Cancelled):
        return 409
    if isinstance(exc, ConfigError):
        return 503
    return 500


def is_api_request() -> bool:
    return request.path == "/api" or request.path.startswith("/api/")


def error_response(status: int, code: str, message: str, **extra) -> Response:
    """SPEC's JSON error for an API request, a plain-text page otherwise."""
    if is_api_request():
        response = jsonify({"error": {"code": code, "message": message, **extra}})
    else:
        response = Response(f"{status}: {message}\n", mimetype="text/plain")
    response.status_code = status
    return response


def register(app: Flask) -> None:
    """Install the handlers on ``app``."""

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):
        return error_response(exc.status, exc.code, exc.message, **exc.extra)

    @app.errorhandler(HermesError)
    def _hermes_error(exc: HermesError):
        status = hermes_status(exc)
        extra = {}
        if getattr(exc, "turn_id", None):
            extra["turn_id"] = exc.turn_id
        if status >= 500:
            log.warning("%s %s failed: %s", request.method, request.path, exc.message)
        return error_response(status, exc.code, exc.message, **extra)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        if exc.response is not None and not is_api_request():
            return exc.response  # a page made on purpose (the login form's lockout)
        status = exc.code or 500
        code = _HTTP_CODES.get(status, "error")
        message = _HTTP_MESSAGES.get(status) or exc.description or exc.name
        response = error_response(status, code, message)
        # Keep what the exception knows about the answer: Allow on 405, Retry-After on 429.
        original = exc.get_response()
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in original.headers:
                response.headers[header] = original.headers[header]
        return response

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("%s %s failed", request.method, request.path)
        return error_response(
            500, "internal", "Something went wrong on the server; the details are in its log."
        )
