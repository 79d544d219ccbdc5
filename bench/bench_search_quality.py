"""Retrieval quality of memory search on a labelled set: prints recall@5 and recall@10.

The set (tests/data/memory_eval.json, made by bench/make_memory_eval.py) is
multi-session chats with questions whose answers sit in known messages.
``--filler N`` regenerates it with N extra filler sessions, a bigger haystack.

    python bench/bench_search_quality.py [--filler 2000] [-v]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes.config import Config  # noqa: E402
from hermes.messages import Message  # noqa: E402
from hermes.store import SessionRecord, Store  # noqa: E402


def load(store: Store, data: dict) -> dict[tuple[str, object], object]:
    """Store every session; map (session key, message index | "summary") to a result key."""
    labels: dict[tuple[str, object], object] = {}
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for n, session in enumerate(data["sessions"]):
        when = start + timedelta(hours=n)
        record = SessionRecord(
            title=session["title"],
            summary=session.get("summary"),
            created_at=when,
            updated_at=when,
            messages=[
                (Message(role=m["role"], content=m["content"]), when) for m in session["messages"]
            ],
        )
        session_id = store.add_session_record(record)
        ids = [m.id for m in store.messages(session_id)]
        for index, message_id in enumerate(ids):
            labels[(session["key"], index)] = ("m", message_id)
        labels[(session["key"], "summary")] = ("s", session_id)
    return labels


def evaluate(
    store: Store, data: dict, labels, ks=(5, 10), verbose: bool = False
) -> dict[str, float]:
    """Mean fraction of each question's evidence found in the top k (``recall@k``),
    and how often the evidence's session is among the top k hits (``session@k``)."""
    totals = dict.fromkeys([f"recall@{k}" for k in ks] + [f"session@{k}" for k in ks], 0.0)
    for question in data["questions"]:
        wanted = {labels[(key, index)] for key, index in question["evidence"]}
        hits = store.search(question["question"], limit=max(ks))
        found = [
            ("m", h.message_id) if h.message_id is not None else ("s", h.session_id) for h in hits
        ]
        sessions = {labels[(key, "summary")][1] for key, _ in question["evidence"]}
        for k in ks:
            totals[f"recall@{k}"] += len(wanted & set(found[:k])) / len(wanted)
            totals[f"session@{k}"] += bool(sessions & {h.session_id for h in hits[:k]})
        if verbose and not wanted & set(found[: min(ks)]):
            print(f"  miss@{min(ks)}: {question['question']!r}")
    return {name: total / len(data["questions"]) for name, total in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "memory_eval.json")
    parser.add_argument(
        "--filler", type=int, default=None, help="regenerate with N filler sessions"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.filler is not None:
        sys.path.insert(0, str(ROOT / "bench"))
        from make_memory_eval import build

        data = build(args.filler)
    else:
        data = json.loads(args.data.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        config = Config(home=home, workspace=home, database_url=f"sqlite:///{home / 'hermes.db'}")
        with Store.open(config) as store:
            labels = load(store, data)
            messages = sum(len(s["messages"]) for s in data["sessions"])
            print(
                f"{len(data['sessions'])} sessions, {messages} messages, {len(data['questions'])} questions"
            )
            recall = evaluate(store, data, labels, verbose=args.verbose)
    for name, value in recall.items():
        print(f"{name}: {value:.3f}")


if __name__ == "__main__":
    main()
