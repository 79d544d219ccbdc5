"""Compaction: make a long session's next request fit, losing as little as possible.

Two steps, cheapest first, each stored as a row of ``compactions`` so the
view (``hermes.agent.context``) is rebuilt identically later:

1. Prune: tool outputs older than the recent part of the conversation are
   shown as short stubs. Conversation text is untouched. Often enough.
2. Summarize: the older turns (after the first user message, before the
   recent ones) are replaced by a structured summary the model writes with
   ``COMPACTION_PROMPT``, folding in the previous summary. The cut always
   falls before a user or assistant message, so a tool call and its result
   are never split. Tool output and imported text reach the summarizer inside
   data tags, and every line of the summary passes the guard before it can
   enter a prompt.

If the summarizer cannot be reached, a plain list of what was said stands in
for the summary: the next request must fit either way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from hermes import guard
from hermes.agent.budget import ContextBudget, estimate_message, estimate_tokens, scaled
from hermes.agent.cancellable import cancellable
from hermes.agent.context import CHARS_PER_TOKEN, ContextWindow, View, build_view, pruned
from hermes.errors import ProviderError
from hermes.events import Compacted, TextDelta, Usage
from hermes.messages import Message, ModelRequest
from hermes.store.values import StoredMessage
from hermes.tools.output import truncate_middle

# Characters of each message the summarizer sees (conversation text gets more
# room than tool output: the summary is about what was said and decided).
TEXT_CHARS = 4_000
TOOL_CHARS = 1_200
FALLBACK_ITEM_CHARS = 200
GUARD_NOTE = "[a line was withheld here: it looked like prompt injection ({reason})]"
_TAGS = ("conversation-summary", "previous-summary", "tool_output", "imported")


class Compactor:
    """One compaction of one session (built by :meth:`ContextWindow.prepare`)."""

    def __init__(self, window: ContextWindow, budget: ContextBudget, ratio: float | None):
        self.window = window
        self.store = window.store
        self.provider = window.provider
        self.budget = budget
        self.ratio = ratio

    def size(self, message: Message) -> int:
        return scaled(estimate_message(message), self.ratio)

    def compact(
        self,
        session_id: int,
        system: str,
        view: View,
        cancel: threading.Event,
        on_usage: Callable[[Usage], None],
        *,
        force: bool = False,
    ) -> Compacted | None:
        """Store a compaction that brings the next request well under the trigger.

        Returns the event to show, or None when there is nothing to compact.
        """
        first_rows = self.store.messages(session_id, limit=1, for_model=True)
        if not first_rows:
            return None
        first = first_rows[0]
        previous = view.compaction
        through = previous.through_message_id if previous else first.id
        after = self.store.messages(session_id, after_id=through, for_model=True)
        before = self._total(system, view.messages)
        fixed = scaled(estimate_tokens(system) + _tools_tokens(self.window), self.ratio)
        head = sum(self.size(m) for m in view.head)
        # Aim at half the room the fixed part (system prompt, tools) leaves
        # under the trigger, so the next compaction is many turns away.
        goal = max(self.budget.target, fixed + (self.budget.trigger - fixed) // 2)
        room = goal - fixed - head - self.budget.summary_tokens
        # Whatever the sizes, the recent part keeps some room.
        keep = max(room, self.budget.window // 10)

        # Step 1: prune old tool outputs (no model call).
        pruned_through = self._prune_point(after, keep, previous)
        if force:  # summarize at least the older half of what is left
            shown = build_view(
                first, _with(previous, pruned_through=pruned_through), after, self.budget
            )
            keep = min(keep, max(1, sum(self.size(m) for m in shown.tail) // 2))
        if not force:
            trial = _with(previous, pruned_through=pruned_through)
            trial_view = build_view(first, trial, after, self.budget)
            if self._total(system, trial_view.messages) <= goal:
                return self._store(
                    session_id,
                    system,
                    first,
                    through=through,
                    pruned_through=pruned_through,
                    summary=previous.summary if previous else None,
                    covered=previous.messages_covered if previous else 0,
                    before=before,
                )

        # Step 2: summarize everything before the recent part.
        cut = self._cut(after, keep, pruned_through)
        older = after[:cut]
        summary = previous.summary if previous else None
        covered = previous.messages_covered if previous else 0
        if older:
            source = self.store.get_session(session_id).source
            summary = self._summarize(summary, older, source == "import", cancel, on_usage)
            covered += len(older)
            through = older[-1].id
        return self._store(
            session_id,
            system,
            first,
            through=through,
            pruned_through=pruned_through,
            summary=summary,
            covered=covered,
            before=before,
        )

    # -- where to cut ------------------------------------------------------------

    def _prune_point(self, after: list[StoredMessage], keep: int, previous) -> int | None:
        """The id of the newest tool message older than the last ``keep`` tokens."""
        current = previous.pruned_through_id if previous else None
        used = 0
        for index in range(len(after) - 1, -1, -1):
            used += self.size(after[index].message)
            if used > keep:
                older_tools = [s.id for s in after[: index + 1] if s.message.role == "tool"]
                if older_tools:
                    return max(older_tools[-1], current or 0)
                break
        return current

    def _cut(self, after: list[StoredMessage], keep: int, pruned_through: int | None) -> int:
        """Index of the first message kept verbatim: the recent part fits in ``keep``,
        it starts at a user or assistant message, and it holds at least the last exchange."""
        last_start = max(
            (i for i, s in enumerate(after) if s.message.role != "tool"), default=len(after)
        )
        used = 0
        cut = len(after)
        for index in range(len(after) - 1, -1, -1):
            message = after[index].message
            if message.role == "tool" and pruned_through and after[index].id <= pruned_through:
                message = pruned(message)
            used += self.size(message)
            if used > keep:
                break
            if message.role != "tool":
                cut = index
        return min(cut, last_start)

    # -- the summary -------------------------------------------------------------

    def _summarize(
        self,
        previous: str | None,
        older: list[StoredMessage],
        imported: bool,
        cancel: threading.Event,
        on_usage: Callable[[Usage], None],
    ) -> str:
        """The new summary: the model's, folded over chunks that each fit the window."""
        from hermes.agent.prompts import COMPACTION_PROMPT

        chunks = _chunks(
            [transcript_line(s, imported) for s in older], self._chunk_chars(COMPACTION_PROMPT)
        )
        summary = previous
        try:
            for chunk in chunks:
                prompt = _summary_input(summary, chunk)
                text = self._ask(COMPACTION_PROMPT, prompt, cancel, on_usage)
                if not text.strip():
                    raise ProviderError("the model wrote an empty summary")
                summary = text
        except ProviderError:
            return guarded(fallback_summary(previous, older, self.budget))
        return guarded(_cap(summary or "", self.budget))

    def _chunk_chars(self, prompt: str) -> int:
        room = (
            self.budget.prompt_limit
            - self.budget.summary_tokens
            - scaled(estimate_tokens(prompt), self.ratio)
            - scaled(self.budget.summary_tokens, self.ratio)  # the previous summary
            - 200
        )
        return max(2_000, int(room * 0.8 * CHARS_PER_TOKEN / (self.ratio or 1.0)))

    def _ask(
        self,
        system: str,
        prompt: str,
        cancel: threading.Event,
        on_usage: Callable[[Usage], None],
    ) -> str:
        request = ModelRequest(
            model=self.provider.model,
            system=system,
            messages=(Message(role="user", content=prompt),),
            max_tokens=self.budget.summary_tokens,
        )
        text = []
        for chunk in cancellable(self.provider.stream(request), cancel):
            if isinstance(chunk, TextDelta):
                text.append(chunk.delta)
            elif isinstance(chunk, Usage):
                on_usage(chunk)
        return "".join(text)

    # -- storing -----------------------------------------------------------------

    def _store(
        self, session_id, system, first, *, through, pruned_through, summary, covered, before
    ) -> Compacted | None:
        """Store the compaction, unless it would not make the request any smaller."""
        after = self.store.messages(session_id, after_id=through, for_model=True)
        trial = _Draft(through, pruned_through, summary, covered)
        tokens_after = self._total(system, build_view(first, trial, after, self.budget).messages)
        if tokens_after >= before:
            return None
        stored = self.store.add_compaction(
            session_id,
            through_message_id=through,
            pruned_through_id=pruned_through,
            summary=summary,
            messages_covered=covered,
            tokens_before=before,
            tokens_after=tokens_after,
            model=self.provider.model,
        )
        return Compacted(
            id=stored.id,
            through_message_id=through,
            messages_covered=covered,
            tokens_before=before,
            tokens_after=tokens_after,
        )

    def _total(self, system: str, messages: tuple[Message, ...]) -> int:
        return scaled(self.window.raw_estimate(system, messages), self.ratio)


class _Draft:
    """A compaction not stored yet, shaped like one for ``build_view``."""

    def __init__(self, through, pruned_through, summary, covered):
        self.through_message_id = through
        self.pruned_through_id = pruned_through
        self.summary = summary
        self.messages_covered = covered


def _with(previous, *, pruned_through):
    if previous is None:
        return _Draft(None, pruned_through, None, 0)
    return _Draft(
        previous.through_message_id, pruned_through, previous.summary, previous.messages_covered
    )


def _tools_tokens(window: ContextWindow) -> int:
    from hermes.agent.budget import estimate_tools

    return estimate_tools(window.tools)


def transcript_line(stored: StoredMessage, imported: bool) -> str:
    """One message as the summarizer reads it; tool output and imported text as tagged data."""
    m = stored.message
    if m.role == "tool":
        body = truncate_middle(_untagged(m.content), TOOL_CHARS)
        state = " error" if m.is_error else ""
        return (
            f"[message {stored.id} · tool result of {m.tool_name or 'a tool'}{state}]\n"
            f"<tool_output>\n{body}\n</tool_output>"
        )
    text = truncate_middle(_untagged(m.content), TEXT_CHARS)
    if imported:
        text = f"<imported>\n{text}\n</imported>"
    calls = "".join(
        f"\n(called {c.name} with {truncate_middle(str(c.input), 300)})" for c in m.tool_calls
    )
    return f"[message {stored.id} · {m.role}]\n{text}{calls}"


def _untagged(text: str) -> str:
    """Data cannot close our data tags: their names are defused inside it."""
    for tag in _TAGS:
        text = text.replace(f"<{tag}", f"‹{tag}").replace(f"</{tag}", f"‹/{tag}")
    return text


def _chunks(lines: list[str], limit: int) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        line = truncate_middle(line, limit)
        if current and size + len(line) > limit:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 2
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def _summary_input(previous: str | None, chunk: str) -> str:
    head = (
        f"<previous-summary>\n{_untagged(previous)}\n</previous-summary>\n\n"
        if previous
        else "(no previous summary)\n\n"
    )
    return f"{head}Messages to fold into the summary:\n\n{chunk}"


def _cap(summary: str, budget: ContextBudget) -> str:
    return truncate_middle(summary.strip(), int(budget.summary_tokens * CHARS_PER_TOKEN))


def guarded(summary: str) -> str:
    """The summary with every line the guard flags replaced by a note saying so."""
    lines = []
    for line in _untagged(summary).split("\n"):
        reasons = guard.scan(line)
        # The note names the kind of hit, never the text (which would carry it in).
        kind = reasons[0].split(" (")[0] if reasons else ""
        lines.append(GUARD_NOTE.format(reason=kind) if reasons else line)
    return "\n".join(lines)


def fallback_summary(
    previous: str | None, older: list[StoredMessage], budget: ContextBudget
) -> str:
    """A summary written without the model: the previous one plus what each message began with."""
    lines = ["(The model could not write this summary; this is a plain list of what was said.)"]
    if previous:
        lines += ["Earlier summary:", truncate_middle(previous, 2_000)]
    for stored in older:
        m = stored.message
        if m.role == "tool":
            lines.append(f"- {m.tool_name or 'tool'} returned {len(m.content):,} characters")
        elif m.content.strip():
            said = " ".join(m.content.split())[:FALLBACK_ITEM_CHARS]
            lines.append(f'- {m.role} (message {stored.id}): "{said}"')
    return _cap("\n".join(lines), budget)
