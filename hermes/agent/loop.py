"""The turn loop: stream, run the tools the model asked for, feed results back, repeat.

One generator, :meth:`Agent.run_turn`, yields the typed events of
:mod:`hermes.events`. Every message is written to the store before anything
acts on it (the assistant message with its tool calls is recorded before a
tool runs), so a crash or a cancel never loses what already happened.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Generator, Iterator
from dataclasses import dataclass

from hermes.agent.cancellable import TurnCancelled, cancellable
from hermes.approvals.gate import Approvals, TurnGate, unattended
from hermes.config import Config
from hermes.errors import HermesError, ProviderError, ToolError
from hermes.events import (
    Done,
    ErrorEvent,
    Event,
    SkillEvent,
    TextDelta,
    ToolCall,
    ToolResult,
    TurnStart,
    Usage,
    total_usage,
)
from hermes.learning.curator import MIN_TOOL_CALLS_FOR_SKILL
from hermes.messages import Message, ModelRequest, valid_text, valid_value
from hermes.providers.base import Provider
from hermes.tools.output import truncate_middle
from hermes.tools.registry import ToolContext, ToolOutput, ToolRegistry


@dataclass
class _Response:
    """What one model call produced."""

    text: str
    tool_calls: list[ToolCall]
    usage: list[Usage]


class Agent:
    """Runs turns against one provider, one store, and one set of tools."""

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
        approvals: Approvals | None = None,
    ):
        self.config = config
        self.provider = provider
        self.store = store
        self.tools = tools
        self.skills = skills
        self.profile = profile
        self.curator = curator
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
        """Run one user turn; yields events ending with exactly one :class:`Done`."""
        cancel = cancel or threading.Event()
        turn_id = turn_id or uuid.uuid4().hex
        text = valid_text(text)
        session = self.store.get_session(session_id)
        # The system prompt is frozen at the session's first turn, so the
        # provider's prompt cache keeps hitting on every later call.
        system = session.system_prompt or self._build_system_prompt()
        first_turn = {}
        if not session.system_prompt:
            first_turn["system_prompt"] = system
        if not session.title:
            first_turn["title"] = title_from(text)
        if first_turn:
            self.store.update_session(session_id, **first_turn)
        user = self.store.add_message(
            session_id,
            Message(role="user", content=text, context=self._turn_context(text)),
            turn_id=turn_id,
        )
        yield TurnStart(session_id=session_id, user_message_id=user.id)

        history = self.store.history(session_id)
        turn_messages: list[Message] = [user.message]
        ctx = ToolContext(
            config=self.config,
            session_id=session_id,
            store=self.store,
            skills=self.skills,
            profile=self.profile,
            cancel=cancel,
        )
        gate = self.approvals.turn(session_id, turn_id)
        spent: list[Usage] = []  # every model call's usage, the curator's included
        tool_call_count = 0
        assistant_id: int | None = None
        stop_reason = "max_iterations"

        for _ in range(self.config.max_iterations):
            response = _Response(text="", tool_calls=[], usage=[])
            try:
                yield from self._stream(system, history, response, cancel)
            except (ProviderError, TurnCancelled) as exc:
                spent += response.usage
                if response.text:
                    # Keep what the user already saw.
                    partial = Message(role="assistant", content=response.text)
                    assistant_id = self._record(session_id, partial, turn_id).id
                if isinstance(exc, TurnCancelled) or cancel.is_set():
                    stop_reason = "cancelled"
                else:
                    yield ErrorEvent(message=exc.message, retryable=exc.retryable)
                    stop_reason = "error"
                break
            spent += response.usage

            assistant = Message(
                role="assistant", content=response.text, tool_calls=tuple(response.tool_calls)
            )
            assistant_id = self._record(session_id, assistant, turn_id).id
            history.append(assistant)
            turn_messages.append(assistant)
            if not response.tool_calls:
                stop_reason = "end_turn"
                break

            tool_call_count += yield from self._run_tools(
                ctx, response.tool_calls, history, turn_messages, turn_id, gate
            )
            if cancel.is_set():
                stop_reason = "cancelled"
                break
            if gate.stopped:
                yield ErrorEvent(message=gate.stopped)
                stop_reason = "error"
                break

        learn = stop_reason == "end_turn" and not cancel.is_set()
        if learn and tool_call_count >= MIN_TOOL_CALLS_FOR_SKILL:
            event = self._curate(turn_messages, session_id, spent.append)
            if event is not None:
                yield event

        usage = total_usage(spent)
        self.store.add_usage(session_id, usage)
        yield usage
        yield Done(stop_reason=stop_reason, assistant_message_id=assistant_id)

    # -- pieces ----------------------------------------------------------------

    def _run_tools(
        self,
        ctx: ToolContext,
        calls: list[ToolCall],
        history: list[Message],
        turn_messages: list[Message],
        turn_id: str,
        gate: TurnGate,
    ) -> Generator[Event, None, int]:
        """Run the calls of one response in order, recording each result; returns how many ran.

        The gate reviews each call first (it may wait for the user's approval).
        Once the turn is cancelled, the remaining calls still get a result, so
        the history stays valid for the next turn.
        """
        ran = 0
        for call in calls:
            yield call
            review = yield from gate.review(call, ctx.cancel)
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
                ran += 1
            result = dataclasses.replace(result, approval=review.record)
            yield result
            yield from extra
            tool_message = Message(
                role="tool",
                content=result.output,
                tool_call_id=call.id,
                tool_name=call.name,
                is_error=result.is_error,
                approval=review.record,
            )
            self._record(ctx.session_id, tool_message, turn_id)
            history.append(tool_message)
            turn_messages.append(tool_message)
        return ran

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

    def _stream(
        self, system: str, history: list[Message], response: _Response, cancel: threading.Event
    ) -> Iterator[Event]:
        request = ModelRequest(
            model=self.provider.model,
            system=system,
            messages=tuple(history),
            tools=self.tools.specs(),
            max_tokens=self.config.max_tokens,
        )
        for chunk in cancellable(self.provider.stream(request), cancel):
            if isinstance(chunk, TextDelta):
                chunk = TextDelta(valid_text(chunk.delta))
                response.text += chunk.delta
                yield chunk
            elif isinstance(chunk, ToolCall):
                chunk = ToolCall(
                    # Some local servers send no call ids; the history needs them.
                    id=valid_text(chunk.id) or f"call_{uuid.uuid4().hex[:12]}",
                    name=valid_text(chunk.name),
                    input=valid_value(chunk.input),
                    input_error=chunk.input_error,
                )
                # Shown when it runs, right before its result (see run_turn).
                response.tool_calls.append(chunk)
            elif isinstance(chunk, Usage):
                response.usage.append(chunk)

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

    def _curate(self, turn_messages: list[Message], session_id: int, on_usage) -> SkillEvent | None:
        if self.curator is None:
            return None
        return self.curator.propose_skill(turn_messages, session_id=session_id, on_usage=on_usage)

    def _record(self, session_id: int, message: Message, turn_id: str):
        return self.store.add_message(session_id, message, turn_id=turn_id)


def title_from(text: str, limit: int = 60) -> str:
    """A session title from its first message: the first line, cut at a word boundary."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line or "New chat"
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut + "…"
