"""The turn loop: stream, run the tools the model asked for, feed results back, repeat.

One generator, :meth:`Agent.run_turn`, yields the typed events of
:mod:`hermes.events`. Every message is written to the store before anything
acts on it (the assistant message with its tool calls is recorded before a
tool runs), so a crash or a cancel never loses what already happened.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field

from hermes.agent.budget import TurnLimits
from hermes.agent.cancellable import TurnCancelled, cancellable
from hermes.agent.context import ContextWindow
from hermes.approvals.gate import Approvals, TurnGate, unattended
from hermes.config import Config
from hermes.errors import ContextTooLong, HermesError, ProviderError, ToolError
from hermes.events import (
    Done,
    ErrorEvent,
    Event,
    SkillEvent,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnStart,
    Usage,
    total_usage,
)
from hermes.learning.curator import MIN_TOOL_CALLS_FOR_SKILL
from hermes.messages import (
    TOOL_INTERRUPTED,
    Message,
    ModelRequest,
    mark_interrupted,
    valid_text,
    valid_value,
)
from hermes.providers.base import Provider
from hermes.store.turns import Heartbeat
from hermes.tools.output import truncate_middle
from hermes.tools.registry import ToolContext, ToolOutput, ToolRegistry

log = logging.getLogger(__name__)


# A streaming answer is saved at least this often, so a killed process loses
# at most about this much of it.
CHECKPOINT_SECONDS = 1.0


@dataclass
class _Response:
    """What one model call produced."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    stop_reason: str = "end_turn"


@dataclass
class _Turn:
    """One running turn's state: what has to be settled however it ends."""

    session_id: int
    turn_id: str
    cancel: threading.Event
    provider: Provider
    stop_reason: str | None = None
    assistant_id: int | None = None
    # The answer being streamed: its checkpointed row and the text so far.
    partial_id: int | None = None
    partial_text: str = ""
    saved_text: str = ""
    saved_at: float = 0.0
    # Tool calls of the last assistant message that have no stored result yet.
    unanswered: list[ToolCall] = field(default_factory=list)
    spent: list[Usage] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # this turn's, for the curator
    tool_call_count: int = 0
    gate: TurnGate | None = None  # reviews each tool call before it runs (hermes.approvals)


class Agent:
    """Runs turns against a provider, one store, and one set of tools.

    ``provider_for(model)`` gives the provider of a session that chose its own
    model; without it every session uses ``provider``.
    """

    def __init__(
        self,
        *,
        config: Config,
        provider: Provider,
        store,
        tools: ToolRegistry,
        skills=None,
        profile=None,
        curator=None,
        provider_for: Callable[[str], Provider] | None = None,
        approvals: Approvals | None = None,
    ):
        self.config = config
        self.provider = provider
        self.store = store
        self.tools = tools
        self.skills = skills
        self.profile = profile
        self.curator = curator
        self.provider_for = provider_for
        # Who decides on dangerous tool calls; the surface supplies it (REPL, web, chat -q).
        self.approvals = approvals or unattended(config)

    # -- the turn --------------------------------------------------------------

    def run_turn(
        self,
        session_id: int,
        text: str,
        *,
        turn_id: str | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[Event]:
        """Start a user turn and return its events: ``TurnStart`` ... ``Done``, then
        at most one curator ``SkillEvent``.

        The turn starts here, not on first iteration: SessionBusy (or NotFound)
        is raised by this call, before anything is written. Closing the events
        early, at any point, leaves a session the next turn can continue.
        """
        events = self._turn(session_id, text, turn_id or uuid.uuid4().hex, cancel)
        first = next(events)
        return _resumed(first, events)

    def _turn(
        self, session_id: int, text: str, turn_id: str, cancel: threading.Event | None
    ) -> Generator[Event, None, None]:
        text = valid_text(text)
        session = self.store.get_session(session_id)
        turn = _Turn(
            session_id=session_id,
            turn_id=turn_id,
            cancel=cancel or threading.Event(),
            provider=self._provider(session.model),
        )
        self.store.start_turn(session_id, turn_id)  # SessionBusy: nothing written yet
        heartbeat = Heartbeat(lambda: self.store.heartbeat(turn_id)).start()
        failure = None
        try:
            yield from self._answer(turn, session, text)
        except HermesError as exc:  # the store failed: a full disk, the session deleted
            failure, turn.stop_reason = exc, "error"
        finally:
            heartbeat.stop()
            self._settle(turn, sys.exc_info()[1])
        if failure is not None:
            yield ErrorEvent(message=failure.message)
        yield total_usage(turn.spent)
        yield Done(stop_reason=turn.stop_reason, assistant_message_id=turn.assistant_id)
        # The session is free and the client knows; learning comes last.
        learn = turn.stop_reason == "end_turn" and not turn.cancel.is_set()
        if learn and turn.tool_call_count >= MIN_TOOL_CALLS_FOR_SKILL:
            event = self._curate(turn)
            if event is not None:
                yield event

    def _answer(self, turn: _Turn, session, text: str) -> Iterator[Event]:
        """Everything up to the complete answer; sets ``turn.stop_reason``."""
        # The system prompt is frozen at the session's first turn, so the
        # provider's prompt cache keeps hitting on every later call.
        system = session.system_prompt or self._build_system_prompt()
        first_turn = {}
        if not session.system_prompt:
            first_turn["system_prompt"] = system
        if not session.title:
            first_turn["title"] = title_from(text)
        if first_turn:
            self.store.update_session(turn.session_id, **first_turn)
        # Read (and repaired) before this turn adds anything.
        history = self.store.model_history(turn.session_id, turn_id=turn.turn_id)
        user = self._record(
            turn, Message(role="user", content=text, context=self._turn_context(text))
        )
        yield TurnStart(session_id=turn.session_id, user_message_id=user.id)
        history.append(user.message)
        ctx = ToolContext(
            config=self.config,
            session_id=turn.session_id,
            store=self.store,
            skills=self.skills,
            profile=self.profile,
            cancel=turn.cancel,
        )
        turn.gate = self.approvals.turn(turn.session_id, turn.turn_id)
        limits = TurnLimits(self.config)
        for _ in range(self.config.max_iterations):
            over_budget = limits.exceeded(turn.spent)  # a safe point: every call has its result
            if over_budget:
                yield ErrorEvent(message=over_budget, retryable=False)
                turn.stop_reason = "budget"
                return
            response = _Response()
            try:
                yield from self._stream(turn, system, history, response)
            except (ProviderError, TurnCancelled) as exc:
                if isinstance(exc, ProviderError) and exc.spent is not None:
                    response.usage.append(exc.spent)  # billed, though the call failed
                if isinstance(exc, TurnCancelled) or turn.cancel.is_set():
                    turn.stop_reason = "cancelled"
                else:
                    yield ErrorEvent(message=exc.message, retryable=exc.retryable)
                    turn.stop_reason = "error"
                return  # _settle keeps the partial answer, marked as interrupted
            finally:
                self._spend(turn, response.usage)
            if response.stop_reason in ("max_tokens", "refusal"):
                # A cut answer's tool calls may be cut too: none of them runs.
                # A refusal is kept for the user, hidden from the model (_settle).
                text = response.text
                if response.stop_reason == "max_tokens":
                    text = mark_interrupted(text)
                self._finish_answer(turn, Message(role="assistant", content=text))
                turn.stop_reason = response.stop_reason
                return
            assistant = Message(
                role="assistant", content=response.text, tool_calls=tuple(response.tool_calls)
            )
            self._finish_answer(turn, assistant)  # stored before any tool runs
            history.append(assistant)
            if not response.tool_calls:
                turn.stop_reason = "end_turn"
                return
            turn.unanswered = list(response.tool_calls)
            yield from self._run_tools(ctx, turn, history)
            if turn.cancel.is_set():
                turn.stop_reason = "cancelled"
                return
            if turn.gate.stopped:  # three denials: the model must not keep trying
                yield ErrorEvent(message=turn.gate.stopped)
                turn.stop_reason = "error"
                return
        turn.stop_reason = "max_iterations"

    def _settle(self, turn: _Turn, error: BaseException | None) -> None:
        """However the turn ended, leave a valid session and free it.

        Runs in ``finally``: after a provider error, a cancel, a bug, or the
        events being closed early (GeneratorExit). The answer cut mid-stream is
        kept with the interrupted mark, every tool call gets a result, and the
        turn is finished, so the next turn can continue the session.
        """
        if turn.stop_reason is None:
            if turn.cancel.is_set():
                turn.stop_reason = "cancelled"
            elif isinstance(error, GeneratorExit | KeyboardInterrupt):
                turn.stop_reason = "interrupted"
            else:
                turn.stop_reason = "error"
        steps = [self._keep_partial, self._answer_unanswered]
        if turn.stop_reason == "refusal":
            steps.append(lambda t: self.store.hide_turn(t.turn_id))
        steps.append(lambda t: self.store.finish_turn(t.turn_id, t.stop_reason))
        for step in steps:
            try:
                step(turn)
            except HermesError as exc:  # e.g. the session was deleted meanwhile
                log.error("turn %s: could not settle: %s", turn.turn_id, exc)

    def _keep_partial(self, turn: _Turn) -> None:
        if turn.partial_text.strip():
            message = Message(role="assistant", content=mark_interrupted(turn.partial_text))
            self._finish_answer(turn, message)

    def _answer_unanswered(self, turn: _Turn) -> None:
        for call in list(turn.unanswered):
            self._record_result(
                turn,
                ToolResult(id=call.id, name=call.name, output=TOOL_INTERRUPTED, is_error=True),
            )

    def _spend(self, turn: _Turn, usage: list[Usage]) -> None:
        """Count one model call's usage and save it at once (a killed turn keeps it)."""
        if not usage:
            return
        turn.spent += usage
        self.store.add_usage(turn.session_id, total_usage(usage), model=turn.provider.model)

    # -- pieces ----------------------------------------------------------------

    def _run_tools(self, ctx: ToolContext, turn: _Turn, history: list[Message]) -> Iterator[Event]:
        """Run the calls of one response in order, storing each result before it is shown.

        The gate reviews each call first (it may wait for the user's approval).
        Once the turn is cancelled, the remaining calls still get a result, so
        the history stays valid for the next turn.
        """
        for call in list(turn.unanswered):
            yield call
            review = yield from turn.gate.review(call, ctx.cancel)
            extra: tuple[Event, ...] = ()
            if ctx.cancel.is_set():
                result = ToolResult(
                    id=call.id, name=call.name, output="cancelled by the user", is_error=True
                )
            elif review.refusal is not None:
                result = ToolResult(
                    id=call.id, name=call.name, output=review.refusal, is_error=True
                )
            else:
                result, extra = self._run_tool(ctx, call)
                turn.tool_call_count += 1
            result = dataclasses.replace(result, approval=review.record)
            history.append(self._record_result(turn, result))
            yield result
            yield from extra

    def _record_result(self, turn: _Turn, result: ToolResult) -> Message:
        message = Message(
            role="tool",
            content=result.output,
            tool_call_id=result.id,
            tool_name=result.name,
            is_error=result.is_error,
            approval=result.approval,
        )
        self._record(turn, message)
        turn.unanswered = [c for c in turn.unanswered if c.id != result.id]
        return message

    def _build_system_prompt(self) -> str:
        """A new session's system prompt: identity, tools, and the profile memory as of now."""
        from hermes.agent.prompts import build_system_prompt

        return build_system_prompt(
            workspace=self.config.workspace,
            profile_snapshot=self.profile.snapshot() if self.profile else "",
            tool_names=self.tools.names(),
            skill_count=len(self.skills.list()) if self.skills else 0,
        )

    def _turn_context(self, text: str) -> str | None:
        """The index of skills relevant to this message, sent ahead of it (never all skills)."""
        if self.skills is None:
            return None
        from hermes.agent.prompts import build_turn_context

        return build_turn_context(self.skills.relevant(text, limit=self.config.skills_in_prompt))

    def context_window(self, session_id: int | None = None) -> ContextWindow:
        """The model's view of a session, sized for the session's own model
        (the loop uses it for every call; the REPL's /context and /compact too)."""
        provider = self.provider
        if session_id is not None:
            provider = self._provider(self.store.get_session(session_id).model)
        return ContextWindow(self.config, provider, self.store, self.tools.specs())

    def _stream(
        self, turn: _Turn, system: str, history: list[Message], response: _Response
    ) -> Iterator[Event]:
        """One model call. The request is the session's view (hermes.agent.context),
        rebuilt from the stored ``history`` and compacted when it would not fit; a
        provider "prompt is too long" before any output compacts and retries once."""
        context = ContextWindow(self.config, turn.provider, self.store, self.tools.specs())
        for attempt in (1, 2):
            prepared = yield from context.prepare(
                turn.session_id,
                system,
                cancel=turn.cancel,
                on_usage=response.usage.append,
                force=attempt > 1,
            )
            request = ModelRequest(
                model=turn.provider.model,
                system=system,
                messages=prepared.messages,
                tools=self.tools.specs(),
                max_tokens=prepared.max_tokens,
            )
            seen = len(response.usage)
            try:
                yield from self._read(turn, request, response)
            except ContextTooLong:
                if attempt > 1 or response.text or response.tool_calls:
                    raise
                context.distrust_estimate(turn.session_id)
                continue
            context.observe(turn.session_id, prepared, response.usage[seen:])
            return

    def _read(self, turn: _Turn, request: ModelRequest, response: _Response) -> Iterator[Event]:
        turn.partial_text, turn.saved_text, turn.saved_at = "", "", time.monotonic()
        stream = cancellable(
            turn.provider.stream(request), turn.cancel, on_idle=lambda: self._checkpoint(turn)
        )
        for chunk in stream:
            if isinstance(chunk, TextDelta):
                chunk = TextDelta(valid_text(chunk.delta))
                response.text += chunk.delta
                turn.partial_text = response.text
                self._checkpoint(turn)
                yield chunk
            elif isinstance(chunk, ToolCall):
                chunk = ToolCall(
                    # Some local servers send no call ids; the history needs them.
                    id=valid_text(chunk.id) or f"call_{uuid.uuid4().hex[:12]}",
                    name=valid_text(chunk.name),
                    input=valid_value(chunk.input),
                    input_error=chunk.input_error,
                )
                # Shown when it runs, right before its result (see _run_tools).
                response.tool_calls.append(chunk)
            elif isinstance(chunk, Usage):
                response.usage.append(chunk)
            elif isinstance(chunk, StreamEnd):
                response.stop_reason = chunk.stop_reason

    def _checkpoint(self, turn: _Turn) -> None:
        """Save the streaming answer when it is about a second ahead of the database."""
        if time.monotonic() - turn.saved_at < CHECKPOINT_SECONDS:
            return
        turn.saved_at = time.monotonic()
        if not turn.partial_text.strip() or turn.partial_text == turn.saved_text:
            return  # nothing new while the model is silent
        turn.partial_id = self.store.checkpoint(
            turn.session_id, turn.turn_id, turn.partial_id, turn.partial_text
        )
        turn.saved_text = turn.partial_text

    def _finish_answer(self, turn: _Turn, message: Message) -> None:
        """Store a complete (or finally cut) answer: it replaces the checkpoint, one row."""
        if turn.partial_id is not None:
            self.store.finish_message(turn.partial_id, message)
            turn.assistant_id = turn.partial_id
        elif message.content or message.tool_calls:
            turn.assistant_id = self._record(turn, message).id
        turn.partial_id, turn.partial_text = None, ""
        turn.messages.append(message)

    def _run_tool(self, ctx: ToolContext, call: ToolCall) -> tuple[ToolResult, tuple[Event, ...]]:
        """Run one tool call; every failure becomes an error result for the model."""
        started = time.monotonic()
        events: tuple[Event, ...] = ()
        is_error = False
        tool = self.tools.get(call.name)
        try:
            if tool is None:
                raise ToolError(
                    f"unknown tool {call.name!r}; available tools: {', '.join(self.tools.names())}"
                )
            if call.input_error:
                raise ToolError(f"invalid arguments: {call.input_error}")
            result = tool.function(ctx, **tool.validate(call.input))
            if isinstance(result, ToolOutput):
                output, events = result.text, result.events
            else:
                output = str(result)
        except HermesError as exc:
            output, is_error = f"error: {exc.message}", True
        except Exception as exc:  # a bug in a tool must not end the user's turn
            output, is_error = f"error: {call.name} failed: {type(exc).__name__}: {exc}", True
        output = truncate_middle(valid_text(output), self.config.tool_output_limit)
        duration_ms = int((time.monotonic() - started) * 1000)
        result = ToolResult(
            id=call.id, name=call.name, output=output, is_error=is_error, duration_ms=duration_ms
        )
        return result, events

    def _curate(self, turn: _Turn) -> SkillEvent | None:
        """Offer the turn to the curator: bounded by HERMES_CURATOR_TIMEOUT, stopped by cancel.

        Its model call's usage is saved to the session as it happens.
        """
        if self.curator is None:
            return None
        curator = self.curator.with_provider(turn.provider)
        return curator.propose_skill(
            turn.messages,
            session_id=turn.session_id,
            on_usage=lambda usage: self.store.add_usage(
                turn.session_id, usage, model=turn.provider.model
            ),
            cancel=turn.cancel,
            timeout=self.config.curator_timeout,
        )

    def _provider(self, model: str | None) -> Provider:
        """The provider of a session: its own model if it chose one."""
        if model and model != self.provider.model and self.provider_for is not None:
            return self.provider_for(model)
        return self.provider

    def _record(self, turn: _Turn, message: Message):
        stored = self.store.add_message(turn.session_id, message, turn_id=turn.turn_id)
        if message.role != "assistant":  # answers are added by _finish_answer
            turn.messages.append(message)
        return stored


def _resumed(first: Event, events: Generator[Event, None, None]) -> Iterator[Event]:
    """The events of a started turn: the one already produced, then the rest.

    Closing this (or dropping it) closes ``events``, whose ``finally`` settles the turn.
    """
    try:
        yield first
        yield from events
    finally:
        events.close()


def title_from(text: str, limit: int = 60) -> str:
    """A session title from its first message: the first line, cut at a word boundary."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line or "New chat"
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut + "…"
