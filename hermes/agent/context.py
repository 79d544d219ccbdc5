"""The model's view of a session: exactly what each request sends, rebuilt from the database.

Without a compaction the view is the whole conversation. With one (the latest
row of ``compactions``) it is::

    the first user message, verbatim (capped if huge)
    one summary message standing in for everything up to through_message_id
    every later message, verbatim; tool outputs up to pruned_through_id shortened

Everything here is a pure function of stored rows (messages, the compaction,
the session's token ratio), so a restarted process sends the very same bytes,
and between two compactions each request extends the previous one: the
provider's prompt cache keeps hitting. Nothing is ever deleted; the full text
stays in ``messages``, shown to the user and searchable.

:class:`ContextWindow` is what the loop calls: ``prepare`` before each model
call (it compacts when the request would pass the threshold), ``observe``
after it (the provider's token count calibrates the estimate).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass

from hermes.agent.budget import (
    ContextBudget,
    calibrated_ratio,
    context_budget,
    estimate_message,
    estimate_tokens,
    estimate_tools,
    prompt_tokens_reported,
    scaled,
)
from hermes.config import Config
from hermes.events import Compacted, Event, Usage, total_usage
from hermes.messages import Message, ToolSpec
from hermes.store.values import Compaction, StoredMessage
from hermes.tools.output import truncate_middle

PRUNED_NOTE = (
    "[{name} output removed from view to save context ({chars:,} characters); it is "
    "stored, and search_memory finds it. It began:]\n{start}"
)
PRUNED_START_CHARS = 240
# Characters per token used to turn a token cap into a character cap.
CHARS_PER_TOKEN = 3.3


@dataclass(frozen=True)
class View:
    """One request's messages, and where they came from."""

    head: tuple[Message, ...]
    summary: Message | None
    tail: tuple[Message, ...]
    tail_ids: tuple[int, ...]
    compaction: Compaction | None

    @property
    def messages(self) -> tuple[Message, ...]:
        return self.head + ((self.summary,) if self.summary else ()) + self.tail


def pruned(message: Message) -> Message:
    """A tool result as the view shows it once pruned: same call id, a short stub."""
    start = message.content[:PRUNED_START_CHARS]
    note = PRUNED_NOTE.format(
        name=message.tool_name or "tool", chars=len(message.content), start=start
    )
    return Message(
        role="tool",
        content=note,
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        is_error=message.is_error,
    )


def squeezed(message: Message, budget: ContextBudget) -> Message:
    """A tool result no bigger than a quarter of the window (its head and tail kept)."""
    cap = int(budget.window // 4 * CHARS_PER_TOKEN)
    if message.role != "tool" or len(message.content) <= cap:
        return message
    return Message(
        role="tool",
        content=truncate_middle(message.content, cap),
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        is_error=message.is_error,
    )


def summary_message(compaction: Compaction) -> Message:
    from hermes.agent.prompts import SUMMARY_BLOCK

    text = SUMMARY_BLOCK.format(count=compaction.messages_covered, summary=compaction.summary)
    return Message(role="user", content=text)


def build_view(
    first: StoredMessage | None,
    compaction: Compaction | None,
    after: list[StoredMessage],
    budget: ContextBudget,
) -> View:
    """The view from stored rows: ``after`` holds the messages past the compaction
    (or every message but ``first`` when there is none)."""
    head: tuple[Message, ...] = ()
    if first is not None:
        message = first.message
        if compaction is not None and message.role == "user":
            cap = int(budget.window // 10 * CHARS_PER_TOKEN)
            message = Message(
                role="user",
                content=truncate_middle(message.content, cap),
                context=message.context,
            )
        head = (message,)
    pruned_through = compaction.pruned_through_id if compaction else None
    tail: list[Message] = []
    ids: list[int] = []
    for stored in after:
        message = stored.message
        if message.role == "tool" and not ids:
            continue  # never a result without its call (compactions never cut there)
        if message.role == "tool" and pruned_through is not None and stored.id <= pruned_through:
            message = pruned(message)
        tail.append(squeezed(message, budget))
        ids.append(stored.id)
    summary = summary_message(compaction) if compaction and compaction.summary else None
    return View(tuple(head), summary, tuple(tail), tuple(ids), compaction)


def transcript_marks(compactions: list[Compaction]) -> list[Compaction]:
    """The compactions a transcript marks ("earlier messages summarized"): those that
    summarized new messages, one per place. Pruning-only ones change no text."""
    marks: list[Compaction] = []
    for compaction in compactions:
        if compaction.summary and (
            not marks or compaction.through_message_id > marks[-1].through_message_id
        ):
            marks.append(compaction)
    return marks


@dataclass(frozen=True)
class Prepared:
    """What the loop sends: the messages, their raw estimate (for calibration), max_tokens."""

    messages: tuple[Message, ...]
    estimate: int
    max_tokens: int


@dataclass(frozen=True)
class ContextReport:
    """How the next request's tokens split (estimates, calibrated); the parts add up to window."""

    window: int
    system: int
    tools: int
    skills_index: int
    summary: int
    history: int
    reserved_for_answer: int
    ratio: float | None
    compactions: int

    @property
    def used(self) -> int:
        return self.system + self.tools + self.skills_index + self.summary + self.history

    @property
    def free(self) -> int:
        return self.window - self.used - self.reserved_for_answer


class ContextWindow:
    """The loop's handle on one provider's context budget over the store."""

    def __init__(self, config: Config, provider, store, tools: tuple[ToolSpec, ...]):
        self.config = config
        self.provider = provider
        self.store = store
        self.tools = tools

    @property
    def budget(self) -> ContextBudget:
        return context_budget(self.provider.model, self.config)

    def view(self, session_id: int) -> View:
        compaction = self.store.latest_compaction(session_id)
        firsts = self.store.messages(session_id, limit=1, for_model=True)
        first = firsts[0] if firsts else None
        if first is None:
            return build_view(None, compaction, [], self.budget)
        through = compaction.through_message_id if compaction else first.id
        after = self.store.messages(session_id, after_id=through, for_model=True)
        return build_view(first, compaction, after, self.budget)

    def raw_estimate(self, system: str, messages: tuple[Message, ...]) -> int:
        fixed = estimate_tokens(system) + estimate_tools(self.tools)
        return fixed + sum(estimate_message(m) for m in messages)

    def prepare(
        self,
        session_id: int,
        system: str,
        *,
        cancel: threading.Event,
        on_usage: Callable[[Usage], None],
        force: bool = False,
    ) -> Generator[Event, None, Prepared]:
        """The next request's messages, compacting first when they would pass the threshold.

        ``force`` compacts regardless (``/compact``, or the provider said the
        prompt is too long). Yields a ``Compacted`` event when it compacts.
        """
        from hermes.agent.compaction import Compactor

        budget = self.budget
        view = self.view(session_id)
        ratio = self.store.get_session(session_id).token_ratio
        raw = self.raw_estimate(system, view.messages)
        if force or scaled(raw, ratio) > budget.trigger:
            compactor = Compactor(self, budget, ratio)
            event = compactor.compact(session_id, system, view, cancel, on_usage, force=force)
            if event is not None:
                yield event
                view = self.view(session_id)
                raw = self.raw_estimate(system, view.messages)
        return Prepared(view.messages, raw, budget.output_reserve)

    def compact_now(
        self, session_id: int, cancel: threading.Event | None = None
    ) -> tuple[Compacted | None, Usage]:
        """Compact a session outside a turn (``/compact``); its usage is added to the session."""
        system = self.store.get_session(session_id).system_prompt
        if not system:
            return None, Usage()
        spent: list[Usage] = []
        steps = self.prepare(
            session_id,
            system,
            cancel=cancel or threading.Event(),
            on_usage=spent.append,
            force=True,
        )
        event = next(iter(steps), None)
        for _ in steps:
            pass
        usage = total_usage(spent)
        if spent:
            self.store.add_usage(session_id, usage, model=self.provider.model)
        return (event if isinstance(event, Compacted) else None), usage

    def observe(self, session_id: int, prepared: Prepared, usage: list[Usage]) -> None:
        """Calibrate the session's estimate with what the provider counted for this request."""
        if not usage:
            return
        ratio = calibrated_ratio(prompt_tokens_reported(usage[-1]), prepared.estimate)
        if ratio is not None:
            self.store.set_token_ratio(session_id, ratio)

    def distrust_estimate(self, session_id: int) -> None:
        """The provider refused a request we thought fit: count tokens a third higher from now on."""
        ratio = self.store.get_session(session_id).token_ratio or 1.0
        self.store.set_token_ratio(session_id, round(min(4.0, ratio * 1.34), 4))

    def report(self, session_id: int | None, system: str) -> ContextReport:
        """The split of the next request's tokens (``/context``); None: a session not started."""
        budget = self.budget
        if session_id is None:
            view, ratio = build_view(None, None, [], budget), None
        else:
            view = self.view(session_id)
            ratio = self.store.get_session(session_id).token_ratio
        skills = sum(estimate_tokens(m.context) for m in view.head + view.tail)
        history = sum(estimate_message(m) for m in view.head + view.tail) - skills
        summary = estimate_message(view.summary) if view.summary else 0
        return ContextReport(
            window=budget.window,
            system=scaled(estimate_tokens(system), ratio),
            tools=scaled(estimate_tools(self.tools), ratio),
            skills_index=scaled(skills, ratio),
            summary=scaled(summary, ratio),
            history=scaled(history, ratio),
            reserved_for_answer=budget.output_reserve,
            ratio=ratio,
            compactions=len(self.store.compactions(session_id)) if session_id else 0,
        )
