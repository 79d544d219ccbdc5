"""``GET /healthz``: is the app up and its database answering? No login, no secrets."""

from __future__ import annotations

import logging

from flask import Blueprint, jsonify
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
