"""Skill selection by meaning as well as by words: the same Embedder as memory search.

A person asks "I pasted our API token in a public chat, what now?"; the skill
is called ``rotate-leaked-credentials``. No word is shared, so keyword overlap
alone cannot offer it. Each skill is embedded once per version of its file
as a few *facets*: the whole skill (name, description, triggers and the
start of its body), its name with its description, and each trigger alone.
A skill is as close to a message as its closest facet: a task worded like
one trigger ("ask for more money" against "salary negotiation") should not
be diluted by the rest of the skill's text. Vectors are kept in memory; a
message costs one query embedding and a (500 x a few) x 384 product.

The two rankings are fused the way memory search fuses them (see
``hermes.store.search``): keyword score over the best keyword score, plus the
cosine calibrated so that the best skill is 1 and the ``CALIBRATION_RANK``-th
is 0. A skill reaches the prompt on meaning alone only when its cosine clears
``FLOOR`` and it is within ``MARGIN`` of the best, so small talk offers none.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hermes.embeddings import Embedder, EmbeddingError
from hermes.skills.index import Terms, lexical_scores, words
from hermes.skills.schema import Skill

log = logging.getLogger(__name__)

LEXICAL_WEIGHT = 0.25
SEMANTIC_WEIGHT = 1.0
CALIBRATION_RANK = 20
FLOOR = 0.20
MARGIN = 0.12
BODY_CHARS = 400


# Facets per skill: the whole, name + description, and at most this many triggers.
TRIGGER_FACETS = 8
TRIGGER_SHARE = 0.5


def skill_text(skill: Skill) -> str:
    """The skill as a whole: what its first facet is made of."""
    return "\n".join(
        [
            skill.name.replace("-", " "),
            skill.description,
            ", ".join(skill.triggers),
            skill.body[:BODY_CHARS],
        ]
    )


def skill_facets(skill: Skill) -> list[str]:
    """The texts a skill is embedded as (see the module docstring), whole first."""
    name = skill.name.replace("-", " ")
    facets = [skill_text(skill), f"{name}: {skill.description}"]
    facets += [trigger for trigger in skill.triggers[:TRIGGER_FACETS] if trigger.strip()]
    return facets


class SkillVectors:
    """Facet vectors of each skill keyed by a hash of its facets, so a changed
    skill is embedded again and an unchanged one never is. Kept in memory and,
    when ``folder`` is given, in ``<folder>/.vectors-<space>.npz`` so that a new
    process (``hermes chat "..."``) does not embed the whole library again."""

    def __init__(self, embedder: Embedder, folder: Path | None = None):
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._file = None
        if folder is not None:
            space = hashlib.sha256(embedder.space.encode()).hexdigest()[:12]
            self._file = Path(folder) / f".vectors-{space}.npz"
        self._loaded = False
        self._stack: tuple[tuple[str, ...], np.ndarray, np.ndarray] | None = None

    def similarities(self, skills: Sequence[Skill], query_vector: np.ndarray) -> np.ndarray:
        """Each skill's cosine to the query: that of its closest facet."""
        if not skills:
            return np.zeros(0, dtype=np.float32)
        matrix, starts = self._stacked(skills)
        cosines = matrix @ query_vector
        whole, described = cosines[starts], cosines[starts + 1]
        cosines[starts] = cosines[starts + 1] = -np.inf
        trigger = np.maximum.reduceat(cosines, starts)
        shrunk = np.where(np.isfinite(trigger), whole + TRIGGER_SHARE * (trigger - whole), whole)
        return np.maximum.reduce([whole, described, shrunk]).astype(np.float32)

    def _stacked(self, skills: Sequence[Skill]) -> tuple[np.ndarray, np.ndarray]:
        """All facet rows in one matrix, and where each skill's rows start
        (rebuilt only when the library changes)."""
        keys, rows = self._rows(skills)
        with self._lock:
            if self._stack is None or self._stack[0] != keys:
                starts = np.cumsum([0] + [len(r) for r in rows[:-1]])
                self._stack = (keys, np.concatenate(rows), starts)
            return self._stack[1], self._stack[2]

    def _rows(self, skills: Sequence[Skill]) -> tuple[tuple[str, ...], list[np.ndarray]]:
        """Each skill's key and (facets x dim) vectors, in order; stale and new
        skills are embedded in one batch."""
        with self._lock:
            self._load()
            texts = [skill_facets(skill) for skill in skills]
            keys = tuple(
                hashlib.sha256("\x00".join(t).encode("utf-8", "replace")).hexdigest() for t in texts
            )
            stale = [i for i, key in enumerate(keys) if key not in self._vectors]
            if stale:
                flat = [facet for i in stale for facet in texts[i]]
                fresh = self.embedder.embed(flat)
                at = 0
                for i in stale:
                    self._vectors[keys[i]] = fresh[at : at + len(texts[i])]
                    at += len(texts[i])
                # Forget vectors of skills that changed or left.
                self._vectors = {key: self._vectors[key] for key in keys}
                self._save()
            return keys, [self._vectors[key] for key in keys]

    def _load(self) -> None:
        if self._loaded or self._file is None:
            return
        self._loaded = True
        try:
            with np.load(self._file, allow_pickle=False) as stored:
                for key in stored.files:
                    rows = stored[key]
                    # Anything else (an older one-vector cache, a damaged file) is re-embedded.
                    if (
                        rows.ndim == 2
                        and rows.shape[0] >= 1
                        and rows.shape[1] == self.embedder.dim
                        and rows.dtype == np.float32
                    ):
                        self._vectors[key] = rows
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            pass  # missing or damaged: it is only a cache

    def _save(self) -> None:
        if self._file is None or not self._file.parent.is_dir():
            return
        try:
            with tempfile.NamedTemporaryFile(
                dir=self._file.parent, prefix=".vectors-", suffix=".tmp", delete=False
            ) as handle:
                np.savez(handle, **self._vectors)
            os.replace(handle.name, self._file)
        except OSError as exc:
            log.warning("could not cache skill vectors: %s", exc)


def fused_rank(
    query: str,
    entries: Sequence[tuple[Skill, Terms]],
    cache: SkillVectors,
    *,
    limit: int,
    use_body: bool,
) -> list[Skill]:
    """The skills best matching ``query`` by words and meaning, best first."""
    if limit <= 0 or not entries or not query or not query.strip():
        return []
    lexical = np.asarray(lexical_scores(query, entries, use_body=use_body), dtype=np.float32)
    try:
        query_vector = cache.embedder.embed_one(query)
        cosines = cache.similarities([skill for skill, _ in entries], query_vector)
    except EmbeddingError as exc:
        log.warning("skill selection by meaning skipped: %s", exc)
        cosines = np.zeros(len(entries), dtype=np.float32)
    best_lexical = float(lexical.max())
    lexical_part = lexical / best_lexical if best_lexical > 0 else lexical
    ordered = np.sort(cosines)[::-1]
    top = float(ordered[0])
    low = float(ordered[min(len(ordered), CALIBRATION_RANK) - 1])
    spread = top - low
    calibrated = np.clip((cosines - low) / spread, 0.0, None) if spread > 1e-6 else cosines * 0
    # On meaning alone a skill must be similar in absolute terms and close to the
    # best, and the message must say something: greetings and thanks are all stop
    # words, and against them a short trigger's cosine is noise.
    by_meaning = bool(words(query))
    admitted = (lexical > 0) | (by_meaning & (cosines >= FLOOR) & (cosines >= top - MARGIN))
    fused = LEXICAL_WEIGHT * lexical_part + SEMANTIC_WEIGHT * calibrated
    order = sorted(
        (i for i in range(len(entries)) if admitted[i]),
        key=lambda i: (-fused[i], -entries[i][0].uses, entries[i][0].name),
    )
    return [entries[i][0] for i in order[:limit]]
