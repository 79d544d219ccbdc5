"""The learning loop: turn a multi-step turn into a skill, and sessions into notes.

After a turn that used :data:`MIN_TOOL_CALLS_FOR_SKILL` or more tool calls
(or on demand, with ``/learn``), the agent loop hands the transcript to
:meth:`Curator.propose_skill`. The model answers ``NONE`` or the four strict
fields; :func:`parse_skill_proposal` reads that deterministically and refuses
anything invalid. A proposal whose name exists, or whose purpose plainly
matches an existing skill, refines that skill (version + 1) instead of adding
a twin.

Model output is hostile input like any other: whatever the model says, the
curator returns an event or None and never raises.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hermes.agent.cancellable import TurnCancelled
from hermes.agent.prompts import SESSION_SUMMARY_PROMPT, SKILL_AUTHORING_PROMPT
from hermes.errors import Conflict, HermesError, NotFound, ProviderError, SkillError
from hermes.events import SkillEvent, Usage
from hermes.messages import Message
from hermes.providers.base import Provider
from hermes.skills.index import overlap, rank, words
from hermes.skills.manager import SkillManager
from hermes.skills.schema import (
    MAX_BODY,
    MAX_DESCRIPTION,
    MAX_TRIGGER_CHARS,
    MAX_TRIGGERS,
    NAME_RE,
    split_triggers,
)

log = logging.getLogger(__name__)

MIN_TOOL_CALLS_FOR_SKILL = 3
# A proposal whose name + description + triggers share this much with an
# existing skill's (Jaccard over content words) is the same skill.
SAME_PURPOSE_OVERLAP = 0.5
TOOL_OUTPUT_CHARS = 1_500
TRANSCRIPT_CHARS = 60_000
EXISTING_SKILLS_SHOWN = 30
SUMMARY_CHARS = 1_000


@dataclass(frozen=True)
class SkillProposal:
    """A skill the model proposed, already checked."""

    name: str
    description: str
    triggers: tuple[str, ...]
    body: str


class Curator:
    """Distils transcripts into skills and session notes with the session's model."""

    def __init__(self, provider: Provider, skills: SkillManager, *, max_tokens: int = 2048):
        self.provider = provider
        self.skills = skills
        self.max_tokens = max_tokens

    def with_provider(self, provider: Provider) -> Curator:
        """This curator asking another model (a session that chose its own)."""
        if provider is self.provider:
            return self
        return Curator(provider, self.skills, max_tokens=self.max_tokens)

    def propose_skill(
        self,
        transcript: Sequence[Message],
        *,
        session_id: int | None = None,
        on_usage: Callable[[Usage], None] | None = None,
        cancel: threading.Event | None = None,
        timeout: float | None = None,
    ) -> SkillEvent | None:
        """Ask the model for a skill; create or refine it. None when there is nothing to keep.

        ``on_usage`` receives the tokens the model call spent. The call gives
        up (None) as soon as ``cancel`` is set or ``timeout`` seconds pass.
        """
        if not transcript:
            return None
        prompt = self._authoring_prompt(transcript)
        try:
            answer = self.provider.complete(
                SKILL_AUTHORING_PROMPT,
                prompt,
                max_tokens=self.max_tokens,
                on_usage=on_usage,
                cancel=cancel,
                timeout=timeout,
            )
        except ProviderError as exc:
            log.warning("curator: the model could not be asked for a skill: %s", exc)
            return None
        except TurnCancelled:
            log.info("curator: cancelled or out of time (HERMES_CURATOR_TIMEOUT)")
            return None
        proposal = parse_skill_proposal(answer)
        if proposal is None:
            log.info("curator: no skill proposed")
            return None
        try:
            return self._save(proposal, session_id)
        except HermesError as exc:
            log.warning("curator: proposed skill %r not saved: %s", proposal.name, exc)
            return None

    def summarize_session(self, transcript: Sequence[Message]) -> str | None:
        """A short first-person note about the session, or None."""
        if not any(m.role == "user" and m.content.strip() for m in transcript):
            return None
        try:
            answer = self.provider.complete(
                SESSION_SUMMARY_PROMPT, render_transcript(transcript), max_tokens=400
            )
        except ProviderError as exc:
            log.warning("curator: the session could not be summarized: %s", exc)
            return None
        note = _strip_fences(answer.replace("\r\n", "\n")).strip()
        if not note or re.fullmatch(r"[*_`\s]*NONE[.!*_`\s]*", note, re.IGNORECASE):
            return None
        return note[:SUMMARY_CHARS].strip()

    def find_twin(self, proposal: SkillProposal) -> str | None:
        """The existing skill this proposal duplicates: same name, or plainly the same purpose."""
        entries = self.skills.terms()
        if any(skill.name == proposal.name for skill, _ in entries):
            return proposal.name
        mine = set(words(f"{proposal.name.replace('-', ' ')} {proposal.description}"))
        mine |= {w for t in proposal.triggers for w in words(t)}
        best, best_score = None, 0.0
        for skill, terms in entries:
            score = overlap(mine, terms.identity())
            if score > best_score:
                best, best_score = skill.name, score
        return best if best_score >= SAME_PURPOSE_OVERLAP else None

    # -- internals -------------------------------------------------------------

    def _save(self, proposal: SkillProposal, session_id: int | None) -> SkillEvent:
        twin = self.find_twin(proposal)
        if twin is None:
            try:
                skill = self.skills.create(
                    proposal.name,
                    proposal.description,
                    proposal.body,
                    triggers=proposal.triggers,
                    created_by="agent",
                    source_session=session_id,
                )
                return SkillEvent(action="created", name=skill.name, version=skill.version)
            except Conflict:
                twin = proposal.name  # written meanwhile by another turn
        try:
            skill = self.skills.refine(
                twin,
                description=proposal.description,
                body=proposal.body,
                triggers=_merge(self.skills.get(twin).triggers, proposal.triggers),
                source_session=session_id,
            )
        except NotFound:
            raise SkillError(f"skill {twin!r} vanished while being refined") from None
        return SkillEvent(action="refined", name=skill.name, version=skill.version)

    def _authoring_prompt(self, transcript: Sequence[Message]) -> str:
        text = render_transcript(transcript)
        entries = self.skills.terms()
        shown = [s for s, _ in entries]
        if len(shown) > EXISTING_SKILLS_SHOWN:
            shown = rank(text, entries, limit=EXISTING_SKILLS_SHOWN, use_body=False)
        existing = "\n".join(f"- {s.name}: {' '.join(s.description.split())}" for s in shown)
        return (
            "Existing skills (reuse a NAME to refine that skill):\n"
            f"{existing or '(none yet)'}\n\n"
            f"Transcript:\n<transcript>\n{text}\n</transcript>\n\n"
            "Answer NONE or NAME / DESCRIPTION / TRIGGERS / BODY as instructed."
        )


def render_transcript(transcript: Sequence[Message], *, limit: int = TRANSCRIPT_CHARS) -> str:
    """A plain-text transcript for the model: long tool outputs cut, the middle dropped if huge."""
    parts = []
    for message in transcript:
        if message.role == "user":
            parts.append(f"USER: {message.content.strip()}")
        elif message.role == "assistant":
            if message.content.strip():
                parts.append(f"ASSISTANT: {message.content.strip()}")
            for call in message.tool_calls:
                parts.append(
                    f"TOOL CALL {call.name}: {_short(repr(call.input), TOOL_OUTPUT_CHARS)}"
                )
        else:
            label = "TOOL ERROR" if message.is_error else "TOOL RESULT"
            parts.append(
                f"{label} {message.tool_name or ''}: {_short(message.content, TOOL_OUTPUT_CHARS)}"
            )
    text = "\n\n".join(parts)
    if len(text) > limit:
        half = limit // 2
        text = (
            f"{text[:half]}\n\n[... {len(text) - limit} characters left out ...]\n\n{text[-half:]}"
        )
    return text


_FIELD = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?[*_]{0,2}[ \t]*(NAME|DESCRIPTION|TRIGGERS|BODY)[ \t]*[*_]{0,2}"
    r"[ \t]*:[ \t]*[*_]{0,2}[ \t]*(.*)$"
)


def parse_skill_proposal(text: str) -> SkillProposal | None:
    """Read the curator's answer. None for NONE, garbage, or an invalid skill."""
    if not isinstance(text, str):
        return None
    text = _strip_fences(text.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text or re.match(r"^[*_`\s]*NONE\b", text, re.IGNORECASE):
        return None
    fields: dict[str, list[str]] = {}
    current = None
    for line in text.split("\n"):
        # Each field starts once, in any order; a field line seen again (or a
        # "NAME:" line inside the body after NAME was given) is plain text.
        match = _FIELD.match(line)
        if match and match.group(1) not in fields:
            current = match.group(1)
            fields[current] = [match.group(2)]
            continue
        if current is not None:
            fields[current].append(line)
    if not {"NAME", "DESCRIPTION", "BODY"} <= fields.keys():
        return None
    name = " ".join(fields["NAME"]).strip().strip("`'\"*_ ").strip()
    description = " ".join(" ".join(fields["DESCRIPTION"]).split()).strip("*_ ")
    triggers = split_triggers(
        [t.strip("*_`'\" -") for t in ",".join(fields.get("TRIGGERS", [])).split(",")]
    )
    body = "\n".join(fields["BODY"]).strip()
    if body.startswith("```") and body.endswith("```") and body.count("```") == 2:
        body = _strip_fences(body).strip()  # the whole body wrapped in one fence
    if not NAME_RE.match(name) or len(name) > 64:
        return None
    if not description or len(description) > MAX_DESCRIPTION:
        return None
    if not body or len(body) > MAX_BODY:
        return None
    triggers = [t for t in triggers if len(t) <= MAX_TRIGGER_CHARS][:MAX_TRIGGERS]
    return SkillProposal(name=name, description=description, triggers=tuple(triggers), body=body)


def _strip_fences(text: str) -> str:
    """Drop one markdown code fence wrapped around the whole answer."""
    stripped = text.strip()
    match = re.fullmatch(r"```[\w+-]*[ \t]*\n(.*?)\n?```", stripped, re.DOTALL)
    return match.group(1) if match else text


def _short(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters]"


def _merge(old: Sequence[str], new: Sequence[str]) -> list[str]:
    return split_triggers([*new, *old])[:MAX_TRIGGERS]


__all__ = [
    "MIN_TOOL_CALLS_FOR_SKILL",
    "Curator",
    "SkillProposal",
    "parse_skill_proposal",
    "render_transcript",
]
