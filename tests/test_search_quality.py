"""Retrieval quality floor on the labelled set in tests/data/memory_eval.json.

A quality test, not a timed one: plain-sentence questions must find the
messages (or session summaries) holding their answers. The full figures come
from bench/bench_search_quality.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hermes.messages import Message
from hermes.store import SessionRecord

DATA = Path(__file__).parent / "data" / "memory_eval.json"


def test_recall_floor(store):
    data = json.loads(DATA.read_text(encoding="utf-8"))
    labels = {}
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for n, session in enumerate(data["sessions"]):
        when = start + timedelta(hours=n)
        session_id = store.add_session_record(
            SessionRecord(
                title=session["title"],
                summary=session["summary"],
                created_at=when,
                updated_at=when,
                messages=[(Message(m["role"], m["content"]), when) for m in session["messages"]],
            )
        )
        for index, stored in enumerate(store.messages(session_id)):
            labels[(session["key"], index)] = ("message", stored.id)
        labels[(session["key"], "summary")] = ("summary", session_id)

    found_at = {5: 0.0, 10: 0.0}
    for question in data["questions"]:
        wanted = {labels[(key, index)] for key, index in question["evidence"]}
        hits = store.search(question["question"], limit=10)
        got = [
            ("message", h.message_id) if h.message_id else ("summary", h.session_id) for h in hits
        ]
        for k in found_at:
            found_at[k] += len(wanted & set(got[:k])) / len(wanted)
    recall = {k: v / len(data["questions"]) for k, v in found_at.items()}
    # Measured 0.88 / 0.88; the misses are answers sharing no words with the question.
    assert recall[5] >= 0.8, recall
    assert recall[10] >= 0.8, recall
