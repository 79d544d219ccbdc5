"""Skill selection by meaning as well as by words: the same Embedder as memory search.

A person asks "I pasted our API token in a public chat, what now?"; the skill
is called ``rotate-leaked-credentials``. No word is shared, so keyword overlap
alone cannot offer it. Each skill is embedded once per version of its file
(name, description, triggers and the start of its body) and kept in memory;
a message costs one query embedding and a 500 x 256 product.

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
from hermes.skills.index import Terms, lexical_scores
from hermes.skills.schema import Skill

log = logging.getLogger(__name__)

LEXICAL_WEIGHT = 0.25
SEMANTIC_WEIGHT = 1.0
CALIBRATION_RANK = 20
FLOOR = 0.20
MARGIN = 0.15
BODY_CHARS = 400


def skill_text(skill: Skill) -> str:
    """What a skill's vector is made of."""
    return "\n".join(
        [
            skill.name.replace("-", " "),
            skill.description,
            ", ".join(skill.triggers),
            skill.body[:BODY_CHARS],
        ]
    )


class SkillVectors:
    """Skill vectors keyed by a hash of what is embedded, so a changed skill is
    embedded again and an unchanged one never is. Kept in memory and, when
    ``folder`` is given, in ``<folder>/.vectors-<space>.npz`` so that a new
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

    def matrix(self, skills: Sequence[Skill]) -> np.ndarray:
        """One row per skill, in order; stale and new skills are embedded in one batch."""
        with self._lock:
            self._load()
            texts = [skill_text(skill) for skill in skills]
            keys = [hashlib.sha256(t.encode("utf-8", "replace")).hexdigest() for t in texts]
            stale = [i for i, key in enumerate(keys) if key not in self._vectors]
            if stale:
                fresh = self.embedder.embed([texts[i] for i in stale])
                for row, i in enumerate(stale):
                    self._vectors[keys[i]] = fresh[row]
                # Forget vectors of skills that changed or left.
                self._vectors = {key: self._vectors[key] for key in keys}
                self._save()
            if not skills:
                return np.zeros((0, self.embedder.dim), dtype=np.float32)
            return np.stack([self._vectors[key] for key in keys])

    def _load(self) -> None:
        if self._loaded or self._file is None:
            return
        self._loaded = True
        try:
            with np.load(self._file, allow_pickle=False) as stored:
                for key in stored.files:
                    vector = stored[key]
                    if vector.shape == (self.embedder.dim,) and vector.dtype == np.float32:
                        self._vectors[key] = vector
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
        cosines = cache.matrix([skill for skill, _ in entries]) @ query_vector
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
    # On meaning alone a skill must be similar in absolute terms and close to the best.
    admitted = (lexical > 0) | ((cosines >= FLOOR) & (cosines >= top - MARGIN))
    fused = LEXICAL_WEIGHT * lexical_part + SEMANTIC_WEIGHT * calibrated
    order = sorted(
        (i for i in range(len(entries)) if admitted[i]),
        key=lambda i: (-fused[i], -entries[i][0].uses, entries[i][0].name),
    )
    return [entries[i][0] for i in order[:limit]]
