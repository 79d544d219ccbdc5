"""The gate between the model's tool calls and the tools: dangerous calls wait for a decision.

The turn loop asks its :class:`TurnGate` to review each call before it runs.
A safe call passes untouched. A forbidden one is refused. A dangerous one
(a shell command the rules flag, a file tool overwriting a file this turn did
not create) runs, waits or is refused depending on ``HERMES_APPROVALS``:

- ``ask``: earlier "session"/"always" decisions are honoured; otherwise the
  gate yields an :class:`~hermes.events.Approval` event and then blocks on the
  surface's approver until it answers or the timeout (a denial) passes;
- ``auto``: it runs (only forbidden is refused), for sandboxes;
- ``deny``: it is refused without asking.

Every decision is returned as a record the loop stores with the tool message
(who decided, when, what and why). After three denials in one turn the gate
stops the turn, so the model cannot keep trying variations.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from hermes.approvals.classify import classify
from hermes.approvals.grants import AlwaysGrants, SessionGrants
from hermes.approvals.rules import DANGEROUS, FORBIDDEN
from hermes.approvals.userrules import load_rules
from hermes.errors import HermesError, ToolError
from hermes.events import Approval, Event, ToolCall

DECISIONS = ("once", "session", "always", "deny")
MAX_DENIALS = 3
FILE_TOOLS = ("write_file", "edit_file")
_SHOWN_VALUE = 4000  # characters of each tool argument put in the approval event


@dataclass(frozen=True)
class Request:
    """One tool call waiting for a decision."""

    id: str
    turn_id: str
    session_id: int | None
    tool: str
    input: dict[str, Any]
    reason: str
    what: str  # the command, or the file, in full
    timeout: float

    def event(self) -> Approval:
        return Approval(id=self.id, tool=self.tool, input=self.input, reason=self.reason)


@dataclass(frozen=True)
class Answer:
    decision: str  # once | session | always | deny
    by: str  # user | timeout | cancelled | policy
    note: str = ""


class Approver(Protocol):
    """What a surface supplies: someone (or something) that answers requests."""

    interactive: bool

    def post(self, request: Request) -> None:
        """Interactive approvers: the request is about to be shown."""

    def withdraw(self, request_id: str) -> None:
        """Interactive approvers: the turn went away before asking."""

    def decide(self, request: Request, *, cancel: threading.Event) -> Answer: ...


class NobodyToAsk:
    """``hermes chat -q`` and other unattended runs: dangerous calls are denied."""

    interactive = False

    def __init__(self, note: str):
        self.note = note

    def post(self, request: Request) -> None:
        pass

    def withdraw(self, request_id: str) -> None:
        pass

    def decide(self, request: Request, *, cancel: threading.Event) -> Answer:
        return Answer("deny", "policy", self.note)


class ApprovalDesk:
    """Requests waiting for the user, answered from another thread (the REPL, a web request).

    The turn's thread blocks in :meth:`decide`; whoever shows the request calls
    :meth:`answer`. No answer within the request's timeout is a denial, and a
    cancelled turn stops waiting at once.
    """

    interactive = True

    def __init__(self):
        self._changed = threading.Condition(threading.RLock())
        self._pending: dict[str, Request] = {}
        self._answers: dict[str, Answer] = {}
        self._deadlines: dict[str, float] = {}

    def post(self, request: Request) -> None:
        with self._changed:
            self._pending[request.id] = request
            self._deadlines[request.id] = time.monotonic() + request.timeout

    def withdraw(self, request_id: str) -> None:
        with self._changed:
            self._pending.pop(request_id, None)
            self._deadlines.pop(request_id, None)
            self._answers.pop(request_id, None)

    def decide(self, request: Request, *, cancel: threading.Event) -> Answer:
        with self._changed:
            if request.id not in self._pending:
                self.post(request)
            deadline = self._deadlines[request.id]
            try:
                while request.id not in self._answers:
                    if cancel.is_set():
                        return Answer("deny", "cancelled", "the turn was cancelled")
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return Answer(
                            "deny", "timeout", f"no answer within {request.timeout:g} seconds"
                        )
                    self._changed.wait(min(left, 0.2))
                return self._answers[request.id]
            finally:
                self.withdraw(request.id)

    def answer(self, request_id: str, decision: str, *, turn_id: str | None = None) -> bool:
        """Answer a waiting request; False if there is no such request (any more)."""
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(DECISIONS)}")
        with self._changed:
            request = self._pending.get(request_id)
            if request is None or request_id in self._answers:
                return False
            if turn_id is not None and request.turn_id != turn_id:
                return False
            self._answers[request_id] = Answer(decision, "user")
            self._changed.notify_all()
            return True

    def is_waiting(self, request_id: str) -> bool:
        with self._changed:
            return request_id in self._pending and request_id not in self._answers

    def pending(self, turn_id: str | None = None) -> list[Request]:
        with self._changed:
            return [
                r
                for r in self._pending.values()
                if turn_id is None or r.turn_id == turn_id
                if r.id not in self._answers
            ]


@dataclass(frozen=True)
class Review:
    """The gate's verdict on one call: run it (``refusal`` None) or answer the model with this."""

    refusal: str | None = None
    record: dict[str, Any] | None = None


@dataclass(frozen=True)
class _Check:
    level: str
    reason: str
    rules: frozenset[str]
    what: str


class Approvals:
    """The approval policy of one surface: mode, approver and standing grants.

    Shared by the turns of a process (thread-safe); :meth:`turn` makes the
    per-turn gate the loop uses.
    """

    def __init__(self, config, approver: Approver, *, mode: str | None = None, policy: str = ""):
        self.config = config
        self.approver = approver
        self.mode = mode or config.approvals
        self.policy = policy or f"HERMES_APPROVALS={self.mode}"
        self.always = AlwaysGrants(config.home)
        self.sessions = SessionGrants()

    def turn(self, session_id: int | None, turn_id: str) -> TurnGate:
        return TurnGate(self, session_id, turn_id)


class TurnGate:
    """Reviews the calls of one turn; counts its denials and the files it created."""

    def __init__(self, approvals: Approvals, session_id: int | None, turn_id: str):
        self.approvals = approvals
        self.session_id = session_id
        self.turn_id = turn_id
        self.denials = 0
        self.created: set[Path] = set()
        self.stopped: str | None = None  # why the turn must end, once it must

    def review(self, call: ToolCall, cancel: threading.Event) -> Generator[Event, None, Review]:
        """Decide whether ``call`` runs; yields an Approval event when the user is asked."""
        if self.stopped:
            return Review(refusal=f"not run: {self.stopped}")
        check = self._check(call)
        if check is None:
            return Review()
        approvals = self.approvals
        if check.level == FORBIDDEN:
            record = self._record(check, "refused", "policy", "forbidden: never runs")
            return self._denied(
                record,
                f"refused: this command is forbidden and is never run, whatever the settings "
                f"({check.reason}). Do not try to work around it.",
            )
        if approvals.mode == "auto":
            return Review(record=self._record(check, "auto", "policy", approvals.policy))
        if approvals.always.covers(check.rules):
            return Review(record=self._record(check, "always", "earlier decision"))
        if self.session_id is not None and approvals.sessions.covers(self.session_id, check.rules):
            return Review(record=self._record(check, "session", "earlier decision"))
        if approvals.mode == "deny":
            record = self._record(check, "deny", "policy", approvals.policy)
            return self._denied(
                record,
                f"denied without asking: {approvals.policy} refuses dangerous actions "
                f"({check.reason}). Do not retry it; tell the user what you wanted to do.",
            )
        request = Request(
            id=f"ap_{uuid.uuid4().hex[:16]}",
            turn_id=self.turn_id,
            session_id=self.session_id,
            tool=call.name,
            input=_shown(call.input),
            reason=check.reason,
            what=check.what,
            timeout=approvals.config.approval_timeout,
        )
        if approvals.approver.interactive:
            # Posted before the event goes out, so whoever shows it can answer at once.
            approvals.approver.post(request)
            try:
                yield request.event()
            except GeneratorExit:
                approvals.approver.withdraw(request.id)
                raise
        answer = approvals.approver.decide(request, cancel=cancel)
        record = self._record(check, answer.decision, answer.by, answer.note)
        if answer.decision == "deny":
            return self._denied(record, _denial_message(answer, check))
        if answer.decision == "session" and self.session_id is not None:
            approvals.sessions.add(self.session_id, check.rules)
        elif answer.decision == "always":
            try:
                approvals.always.add(check.rules, check.reason, check.what)
            except HermesError as exc:
                record["note"] = f"approved once; {exc.message}"
        return Review(record=record)

    # -- pieces ------------------------------------------------------------------

    def _check(self, call: ToolCall) -> _Check | None:
        config = self.approvals.config
        if call.name == "run_bash":
            command = call.input.get("command") if isinstance(call.input, dict) else None
            if not isinstance(command, str):
                return None  # the tool's own validation answers the model
            verdict = classify(
                command,
                workspace=config.workspace,
                home=config.user_home,
                user_rules=load_rules(config.home),
                hermes_home=config.home,
            )
            if verdict.level not in (DANGEROUS, FORBIDDEN):
                return None
            return _Check(verdict.level, verdict.reason, verdict.rules, command)
        if call.name in FILE_TOOLS:
            return self._check_file(call)
        return None

    def _check_file(self, call: ToolCall) -> _Check | None:
        """Overwriting or editing a file that existed before this turn asks first, and so
        does writing any ``.env`` (it sets variables for whatever starts in its folder)."""
        from hermes.tools.workspace import relative_name, resolve_in_workspace

        path = call.input.get("path") if isinstance(call.input, dict) else None
        if not isinstance(path, str):
            return None
        config = self.approvals.config
        workspace = config.workspace
        try:
            target = resolve_in_workspace(workspace, path, home=config.home)
        except ToolError:
            return None  # the tool refuses it itself
        verb = "overwrites" if call.name == "write_file" else "changes"
        if target.name == ".env":
            name = relative_name(workspace, target)
            return _Check(
                DANGEROUS,
                f"{'creates' if not target.exists() else verb} {name}, which sets environment "
                "variables for the programs started in its folder",
                frozenset({"write-dotenv"}),
                name,
            )
        if not target.exists():
            self.created.add(target)
            return None
        if target in self.created or not target.is_file():
            return None
        name = relative_name(workspace, target)
        return _Check(
            DANGEROUS,
            f"{verb} {name}, which existed before this turn",
            frozenset({"overwrite-file"}),
            name,
        )

    def _record(self, check: _Check, decision: str, by: str, note: str = "") -> dict[str, Any]:
        record = {
            "decision": decision,
            "by": by,
            "at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": check.level,
            "reason": check.reason,
            "rules": sorted(check.rules),
            "what": check.what[:2000],
        }
        if note:
            record["note"] = note
        return record

    def _denied(self, record: dict[str, Any], message: str) -> Review:
        self.denials += 1
        if self.denials >= MAX_DENIALS:
            self.stopped = (
                f"{self.denials} actions were denied in this turn, so the turn was stopped "
                "instead of letting the model keep trying. Say what you want done instead."
            )
        return Review(refusal=message, record=record)


def unattended(config) -> Approvals:
    """The policy when the surface supplied none: nobody is there to ask, so ask means deny."""
    return Approvals(config, NobodyToAsk("Nobody was there to approve it."))


def _denial_message(answer: Answer, check: _Check) -> str:
    if answer.by == "timeout":
        return (
            f"not run: nobody approved it ({answer.note}), which counts as a denial "
            f"({check.reason}). Do not retry it; ask the user."
        )
    if answer.by == "cancelled":
        return "not run: the turn was cancelled while it waited for approval"
    if answer.by == "policy":
        return f"denied: {check.reason}. {answer.note} Do not retry it."
    return (
        f"denied by the user ({check.reason}). It did not run. Do not retry it or work "
        "around it; ask the user what to do instead."
    )


def _shown(arguments: Any) -> dict[str, Any]:
    """The call's arguments for the approval card, long values cut (the record keeps ``what``)."""
    if not isinstance(arguments, dict):
        return {}
    shown = {}
    for key, value in arguments.items():
        if isinstance(value, str) and len(value) > _SHOWN_VALUE:
            value = value[:_SHOWN_VALUE] + f"… [{len(value) - _SHOWN_VALUE} more characters]"
        shown[key] = value
    return shown
