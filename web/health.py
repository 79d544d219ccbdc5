"""``GET /healthz``: is the app up and its database answering? No login, no secrets.

``GET /healthz/stream`` lets ``hermes doctor --url`` see whether a proxy buffers streams.
"""

from __future__ import annotations

import json
import logging
import time

from flask import Blueprint, Response, jsonify, stream_with_context
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from web.context import get_runtime

bp = Blueprint("health", __name__)
log = logging.getLogger("hermes.web.health")


@bp.get("/healthz")
def healthz():
    """200 ``{"status": "ok", "db": "ok"}``, or 503 with ``"db": "error"`` (details in the log)."""
    try:
        with get_runtime().store.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        log.warning("health check: the database does not answer: %s", type(exc).__name__)
        response = jsonify({"status": "error", "db": "error"})
        response.status_code = 503
        return response
    return {"status": "ok", "db": "ok"}


STREAM_LINES = 3
STREAM_GAP_SECONDS = 0.25
STREAM_LIMIT = "20 per minute"


@bp.get("/healthz/stream")
def healthz_stream():
    """Three NDJSON lines a quarter of a second apart, sent like a turn's stream.

    ``hermes doctor --url`` times their arrival from outside: lines that arrive
    together mean a proxy in between buffers responses, which would hold a
    turn's text back until the turn ends. No login, nothing stored, rate-limited.
    """

    def lines():
        for n in range(STREAM_LINES):
            if n:
                time.sleep(STREAM_GAP_SECONDS)
            yield json.dumps({"type": "ping", "n": n}) + "\n"

    response = Response(stream_with_context(lines()), mimetype="application/x-ndjson")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def init_app(app) -> None:
    """Register the blueprint; the stream route gets its own per-address rate limit."""
    app.register_blueprint(bp)
    limiter = app.extensions.get("hermes.limiter")
    if limiter is not None:
        endpoint = "health.healthz_stream"
        app.view_functions[endpoint] = limiter.limit(STREAM_LIMIT)(app.view_functions[endpoint])
