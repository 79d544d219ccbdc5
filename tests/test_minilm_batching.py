"""MiniLM's backfill batches messages by length and pads them: a message's
vector must not depend on which others share its batch."""

from __future__ import annotations

import numpy as np

from hermes.embeddings import minilm
from hermes.embeddings.minilm import shared_minilm

TEXTS = [
    "ok",
    "Rotate the leaked API token and revoke the old one.",
    "I need a name for the home-automation project, something short " * 6,
    "日本語の勉強をしています",
    "a",
    "The deploy failed again because the disk on the build box is full " * 20,  # truncated
]


def test_vectors_do_not_depend_on_batching(monkeypatch):
    embedder = shared_minilm()
    alone = np.stack([embedder.embed([text])[0] for text in TEXTS])
    together = embedder.embed(TEXTS)
    monkeypatch.setattr(minilm, "BATCH", 2)
    pairs = embedder.embed(list(reversed(TEXTS)))[::-1]
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(pairs, alone, atol=1e-5)
    # And they are distinct, real vectors (not all zero or all alike).
    assert np.all(np.abs(np.linalg.norm(alone, axis=1) - 1) < 1e-4)
    assert float(alone[1] @ alone[4]) < 0.9
