"""Approvals on the web: a dangerous tool call waits for the user's answer in the browser.

The turn runs in the pool (``web.pool``); the gate yields an ``approval`` event,
which the pool streams like any other (and replays after a reload), then the
turn's thread waits on this process's :class:`~hermes.approvals.gate.ApprovalDesk`.
``POST /api/turns/<turn_id>/approvals/<id>`` ``{"decision": "once|session|always|deny"}``
answers it and the turn goes on. Nobody answering within HERMES_APPROVAL_TIMEOUT
(default 5 minutes) is a denial. ``GET /api/turns/<turn_id>/approvals`` lists
what still waits, so a reloaded page knows which replayed cards to offer.

With HERMES_WEB_ENABLE_SHELL on, the browser can never widen the policy:
``ask`` unless the operator set HERMES_APPROVALS=auto (or ``deny``) in the
server's environment; nothing here switches modes.
"""

from __future__ import annotations

from flask import Blueprint, Flask, current_app, jsonify

from hermes.approvals.gate import DECISIONS, ApprovalDesk, Approvals
from web.auth import login_required
from web.context import ApiError, json_body

bp = Blueprint("approvals", __name__)

DESK_KEY = "hermes.approvals.desk"


def init_app(app: Flask, runtime) -> ApprovalDesk:
    """Give the runtime's web turns an approval desk and add the routes."""
    desk = ApprovalDesk()
    runtime.approvals = Approvals(runtime.config, desk)
    app.extensions[DESK_KEY] = desk
    app.register_blueprint(bp)
    return desk


def _desk() -> ApprovalDesk:
    return current_app.extensions[DESK_KEY]


@bp.post("/api/turns/<turn_id>/approvals/<approval_id>")
@login_required
def decide(turn_id: str, approval_id: str):
    """Answer a waiting approval; 404 when nothing with this id waits (answered, timed out, gone)."""
    decision = json_body(required={"decision": "string"})["decision"]
    if decision not in DECISIONS:
        raise ApiError(
            400,
            "invalid",
            f'Field "decision" must be one of {", ".join(DECISIONS)}.',
            field="decision",
        )
    if not _desk().answer(approval_id, decision, turn_id=turn_id):
        raise ApiError(
            404,
            "not_found",
            "Nothing waits for this approval any more: it was answered, timed out or the "
            "turn ended. Reload the session to see what happened.",
        )
    return jsonify({"approval": {"id": approval_id, "turn_id": turn_id, "decision": decision}})


@bp.get("/api/turns/<turn_id>/approvals")
@login_required
def pending(turn_id: str):
    """The approvals of this turn that still wait for an answer."""
    waiting = [
        {"id": r.id, "tool": r.tool, "input": r.input, "reason": r.reason}
        for r in _desk().pending(turn_id)
    ]
    return jsonify({"pending": waiting})
