"""Turn routes: start a turn and stream it, follow or replay a turn, cancel it.

The turn itself runs in the :class:`~web.pool.TurnPool`, never inside a
response; a response only reads the turn's event buffer. So a client that
leaves (a closed tab, a dropped connection, a proxy's 15-minute cap) costs
nothing but its reader: the turn goes on and its result is saved. Each event
is written to the socket as its own chunk the moment it exists, as one NDJSON
line ``{"seq", "turn_id", "type", ...}``. A silent stream gets a
``{"type":"ping"}`` line every ``HERMES_WEB_HEARTBEAT_SECONDS`` (no seq,
never stored), and every stream ends by itself after
``HERMES_WEB_STREAM_MAX_SECONDS`` so that no proxy cuts it mid-line; the
client resumes with ``GET /api/turns/<id>/events?after=<last seq>``.

Replay of a turn that is no longer held (past ``HERMES_WEB_REPLAY_SECONDS``
or ``HERMES_WEB_REPLAY_TURNS``, or from before a restart) answers 410
``turn_gone`` with the turn's ``session_id`` and ``session_url``: the
session's stored messages hold the whole turn, so the client reloads them
instead of replaying events.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

from flask import Blueprint, Flask, Response, current_app, jsonify, request

from hermes.errors import InvalidInput, NotFound, SessionBusy
from web.auth import login_required
from web.context import ApiError, json_body
from web.pool import LiveTurn, PoolClosed, TurnGone, TurnPool

log = logging.getLogger(__name__)

bp = Blueprint("turns", __name__)

POOL_KEY = "hermes.pool"
SETTINGS_KEY = "hermes.turns.stream"

_TURN_ID = re.compile(r"^[0-9a-f]{32}$")
# A message is one user turn; anything near this size is a paste gone wrong.
MAX_MESSAGE_CHARS = 200_000


def init_app(app: Flask, runtime) -> TurnPool:
    """Create the process's TurnPool at ``app.extensions["hermes.pool"]`` and add the routes."""
    config = runtime.config

    def run_turn(session_id, text, *, turn_id, cancel):
        return runtime.agent().run_turn(session_id, text, turn_id=turn_id, cancel=cancel)

    pool = TurnPool(
        run_turn,
        keep_seconds=config.web_replay_seconds,
        keep_turns=config.web_replay_turns,
        session_of_turn=lambda turn_id: runtime.store.turn_session(turn_id),
    )
    app.extensions[POOL_KEY] = pool
    app.extensions[SETTINGS_KEY] = {
        "heartbeat": config.web_heartbeat_seconds,
        "max_seconds": config.web_stream_max_seconds,
    }
    app.register_blueprint(bp)
    return pool


def get_pool() -> TurnPool:
    return current_app.extensions[POOL_KEY]


@bp.post("/api/sessions/<id:session_id>/turns")
@login_required
def start_turn(session_id: int):
    """Start a turn with ``{"message": "..."}`` and stream its events (200, NDJSON).

    409 ``session_busy`` with ``turn_id`` when the session has a running turn;
    404 for an unknown session; 400 for a missing or empty message; 503 while
    the server shuts down.
    """
    message = json_body(required={"message": "string"})["message"]
    if not message.strip():
        raise ApiError(400, "invalid", 'Field "message" must not be empty.', field="message")
    if len(message) > MAX_MESSAGE_CHARS:
        raise ApiError(
            400,
            "invalid",
            f'Field "message" is longer than {MAX_MESSAGE_CHARS} characters.',
            field="message",
        )
    try:
        turn = get_pool().start(session_id, message)
    except SessionBusy as exc:
        raise ApiError(409, "session_busy", exc.message, turn_id=exc.turn_id) from None
    except NotFound as exc:
        raise ApiError(404, "not_found", exc.message) from None
    except InvalidInput as exc:
        raise ApiError(400, "invalid", exc.message, field="message") from None
    except PoolClosed as exc:
        raise ApiError(503, exc.code, exc.message) from None
    return _stream(turn, after=0)


@bp.get("/api/turns/<turn_id>/events")
@login_required
def follow_turn(turn_id: str):
    """Replay the turn's events after seq ``after`` (default 0), then follow it live until it ends.

    404 for a turn never known; 410 ``turn_gone`` with ``session_id`` and
    ``session_url`` for a turn whose events are no longer held (ended long
    ago, evicted, or from before a restart): its messages are in that session.
    """
    raw = request.args.get("after", "0")
    if not raw.isdigit() or len(raw) > 12:
        raise ApiError(
            400,
            "invalid",
            'Query parameter "after" must be a whole number (the last seq seen).',
            field="after",
        )
    return _stream(_find(turn_id), after=int(raw))


@bp.post("/api/turns/<turn_id>/cancel")
@login_required
def cancel_turn(turn_id: str):
    """Ask the turn to stop at its next safe point; its stream then ends with done ``cancelled``.

    Answers 202 with the turn while it runs, 200 when it had already ended.
    """
    turn = _find(turn_id)
    pool = get_pool()
    pool.cancel(turn_id)
    status = 200 if turn.finished else 202
    return jsonify({"turn": pool.describe(turn)}), status


def _find(turn_id: str) -> LiveTurn:
    if not _TURN_ID.match(turn_id):
        raise ApiError(404, "not_found", "There is no turn with this id.")
    try:
        return get_pool().get(turn_id)
    except TurnGone as exc:
        raise ApiError(
            410,
            exc.code,
            exc.message,
            turn_id=turn_id,
            session_id=exc.session_id,
            session_url=f"/api/sessions/{exc.session_id}",
        ) from None
    except NotFound as exc:
        raise ApiError(404, "not_found", exc.message) from None


def _stream(turn: LiveTurn, *, after: int) -> Response:
    settings = current_app.extensions[SETTINGS_KEY]
    lines = turn.read(after, heartbeat=settings["heartbeat"], max_seconds=settings["max_seconds"])
    response = Response(_body(lines, turn.turn_id), status=200, mimetype="application/x-ndjson")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each chunk on at once
    return response


def _body(lines: Iterator[bytes], turn_id: str) -> Iterator[bytes]:
    """The response body: the reader's lines. Its end or close never touches the turn."""
    try:
        yield from lines
    except TurnGone:
        # This reader fell behind a full buffer; resuming answers 410 with the session.
        log.info("reader of turn %s fell behind its buffer", turn_id)
    except GeneratorExit:
        # The client left (the server closes the body): the turn goes on without it.
        log.debug("reader of turn %s left", turn_id)
        raise
    finally:
        lines.close()
