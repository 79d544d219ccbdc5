"""Finding the skills that matter for a message, and the compact index the model sees.

Scoring is plain keyword overlap weighted by rarity (an IDF), with a skill's
name and triggers counting more than its description and body. It is
deterministic, needs no model, and is fast enough for hundreds of skills
because each skill's terms are computed once per file change (see the
manager's cache).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hermes.guard import scan
from hermes.skills.schema import MAX_DESCRIPTION, MAX_TRIGGER_CHARS, MAX_TRIGGERS, Skill

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORD_TEXT = """a about after all also an and any are as at be been but by can could do does
    for from get got had has have how i if in into is it its just let like me my no
    not of on or our please so some than that the their them then there these this to
    up us use using was we what when where which who why will with would you your
    hi hello hey thanks thank ok okay yes yeah sure want need make"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# How much a query word found in each field counts.
WEIGHTS = {"name": 3.0, "triggers": 3.0, "description": 1.5, "body": 0.5}


def words(text: str) -> list[str]:
    """Lowercase content words of ``text``, stop words dropped, crude plural folding."""
    found = []
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS or len(word) < 2:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


@dataclass(frozen=True)
class Terms:
    """A skill's words per field, computed once per version of its file."""

    name: frozenset[str]
    triggers: frozenset[str]
    description: frozenset[str]
    body: frozenset[str]
    phrases: tuple[str, ...]  # multi-word triggers, matched as phrases

    @classmethod
    def of(cls, skill: Skill) -> Terms:
        return cls(
            name=frozenset(words(skill.name.replace("-", " "))),
            triggers=frozenset(w for t in skill.triggers for w in words(t)),
            description=frozenset(words(skill.description)),
            body=frozenset(words(skill.body[:20_000])),
            phrases=tuple(t for t in skill.triggers if " " in t),
        )

    def identity(self) -> frozenset[str]:
        """The words that say what the skill is for (not how it does it)."""
        return self.name | self.triggers | self.description


def rank(
    query: str,
    entries: Sequence[tuple[Skill, Terms]],
    *,
    limit: int,
    use_body: bool,
    minimum: float = 0.0,
) -> list[Skill]:
    """The skills best matching ``query``, best first; ties broken by uses, then name."""
    if limit <= 0:
        return []
    scores = lexical_scores(query, entries, use_body=use_body)
    scored = [
        (-score, -skill.uses, skill.name, skill)
        for (skill, _), score in zip(entries, scores, strict=True)
        if score > minimum
    ]
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored[:limit]]


def lexical_scores(
    query: str, entries: Sequence[tuple[Skill, Terms]], *, use_body: bool
) -> list[float]:
    """Each skill's keyword score for ``query`` (0.0 when no word matches)."""
    query_words = set(words(query))
    lowered = " ".join(query.lower().split())
    if not query_words or not entries:
        return [0.0] * len(entries)
    document_frequency: Counter[str] = Counter()
    for _, terms in entries:
        fields = terms.identity() | (terms.body if use_body else frozenset())
        document_frequency.update(fields & query_words)
    total = len(entries)
    idf = {w: math.log(1 + total / (1 + document_frequency[w])) for w in query_words}
    scores = []
    for _, terms in entries:
        score = 0.0
        for word in query_words:
            weight = 0.0
            if word in terms.name:
                weight += WEIGHTS["name"]
            if word in terms.triggers:
                weight += WEIGHTS["triggers"]
            if word in terms.description:
                weight += WEIGHTS["description"]
            if use_body and word in terms.body:
                weight += WEIGHTS["body"]
            score += weight * idf[word]
        score += sum(WEIGHTS["triggers"] for phrase in terms.phrases if phrase in lowered)
        scores.append(score)
    return scores


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """Share of words in common (Jaccard), 0.0-1.0."""
    first, second = set(a), set(b)
    if not first or not second:
        return 0.0
    return len(first & second) / len(first | second)


def render_index(skills: Sequence[Skill]) -> str:
    """One line per skill for the prompt: ``- name: description [triggers: a, b]``.

    A skill whose name, description or triggers trip the injection guard is
    listed without them, so imported text cannot steer the model from here.
    Each line is capped (description and triggers at the format's limits): a
    skill file dropped into the folder by hand is not checked like an import.
    """

    def capped(text: str, limit: int) -> str:
        return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

    lines = []
    for skill in skills:
        description = capped(" ".join(skill.description.split()), MAX_DESCRIPTION)
        triggers = ", ".join(capped(t, MAX_TRIGGER_CHARS) for t in skill.triggers[:MAX_TRIGGERS])
        if scan(f"{description}\n{triggers}"):
            lines.append(f"- {skill.name}: (description withheld: flagged by the content guard)")
            continue
        line = f"- {skill.name}: {description}"
        if triggers:
            line += f" [triggers: {triggers}]"
        lines.append(line)
    return "\n".join(lines)
