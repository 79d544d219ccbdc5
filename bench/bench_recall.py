"""Recall on the harder set: memory recall@5/@10 per question type, and skill hit rate.

The data comes from bench/make_recall_eval.py (regenerated in memory, so the
bench always measures the generator's current set). Memory questions go
verbatim through ``Store.search`` (what the tool, CLI and API use); a skill
task counts as a hit when the right skill is among the skills the agent puts
in the prompt for that message (``SkillManager.relevant``).

Next to today's figures it prints stored "before" rows: the same set measured
with the code before issue 15 (words only, commit e29992f) and before the
word-match floor and skill facets (commit 83faab9). Both were measured by
running those commits' bench_recall.py with this generator. They belong to one version
of the set (``SET_FINGERPRINT``); when the generator changes they are
reported as stale instead of compared.

    python bench/bench_recall.py [-v] [--embeddings local|fast|off]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from make_recall_eval import build_memory, build_skills  # noqa: E402

from hermes.config import Config  # noqa: E402
from hermes.embeddings import make_embedder  # noqa: E402
from hermes.messages import Message  # noqa: E402
from hermes.skills import SkillManager  # noqa: E402
from hermes.store import SessionRecord, Store  # noqa: E402

# Figures of earlier code on this version of the set: {label: {type: (R@5, R@10)}, skills}.
SET_FINGERPRINT = "1f43a551aa22"
BEFORE: dict[str, dict] = {
    # Words only (BM25), before issue 15: commit e29992f.
    "before issue 15": {
        "adversarial": (62.5, 75.0),
        "context": (27.8, 27.8),
        "multi_hop": (40.5, 54.8),
        "open_domain": (27.3, 27.3),
        "paraphrase": (8.8, 17.6),
        "single_hop": (91.7, 100.0),
        "temporal": (22.6, 25.8),
        "all": (31.5, 38.1),
    },
    # Context index + MiniLM fusion, before the word-match floor: commit 83faab9.
    "before floor": {
        "adversarial": (100.0, 100.0),
        "context": (86.1, 88.9),
        "multi_hop": (42.1, 63.5),
        "open_domain": (54.5, 72.7),
        "paraphrase": (76.5, 79.4),
        "single_hop": (100.0, 100.0),
        "temporal": (45.2, 64.5),
        "all": (66.9, 77.3),
    },
}
BEFORE_SKILLS: dict[str, int] = {"before issue 15": 17, "before facets": 38}


def fingerprint(memory: dict, skills: dict) -> str:
    """Which version of the generated set the figures belong to."""
    blob = json.dumps([memory, skills], sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def open_store(config: Config) -> Store:
    return Store.open(config)


def finish_indexing(store: Store) -> None:
    """Embed everything before asking (the background indexer would, a moment later)."""
    reindex = getattr(store, "reindex", None)
    if reindex is not None:
        for _ in reindex():
            pass


def load_memory(store: Store, data: dict) -> dict:
    labels = {}
    for session in data["sessions"]:
        when = datetime.fromisoformat(session["created_at"])
        session_id = store.add_session_record(
            SessionRecord(
                title=session["title"],
                created_at=when,
                updated_at=when,
                messages=[(Message(m["role"], m["content"]), when) for m in session["messages"]],
            )
        )
        for index, stored in enumerate(store.messages(session_id)):
            labels[(session["key"], index)] = stored.id
    return labels


def evaluate_memory(store: Store, data: dict, labels: dict, verbose: bool) -> dict:
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for question in data["questions"]:
        wanted = {labels[(key, index)] for key, index in question["evidence"]}
        found = [hit.message_id for hit in store.search(question["question"], limit=10)]
        for kind in (question["type"], "all"):
            totals[kind][0] += len(wanted & set(found[:5])) / len(wanted)
            totals[kind][1] += len(wanted & set(found[:10])) / len(wanted)
            totals[kind][2] += 1
        if verbose and not wanted & set(found[:10]):
            print(f"  miss@10 [{question['type']}]: {question['question']}")
    return {kind: (r5 / n, r10 / n, n) for kind, (r5, r10, n) in totals.items()}


def evaluate_skills(
    manager: SkillManager, data: dict, limit: int, verbose: bool
) -> tuple[int, float]:
    hits = 0
    started = time.perf_counter()
    for task in data["tasks"]:
        chosen = [skill.name for skill in manager.relevant(task["task"], limit=limit)]
        if task["skill"] in chosen:
            hits += 1
        elif verbose:
            print(f"  skill miss: {task['task']!r} -> {chosen[:3]}")
    per_task_ms = (time.perf_counter() - started) / len(data["tasks"]) * 1000
    return hits, per_task_ms


def install_skills(manager: SkillManager, data: dict) -> None:
    for skill in data["skills"]:
        manager.create(
            skill["name"], skill["description"], skill["body"], triggers=skill["triggers"]
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument(
        "--embeddings",
        choices=["local", "fast", "off"],
        default="local",
        help="the memory embedder (HERMES_EMBEDDINGS); skills always use the local choice",
    )
    args = parser.parse_args()
    memory = build_memory()
    skills = build_skills()
    messages = sum(len(s["messages"]) for s in memory["sessions"])
    lives = sorted({s["life"] for s in memory["sessions"]})
    print(f"set {fingerprint(memory, skills)}")
    print(
        f"memory: {len(lives)} users, {len(memory['sessions'])} sessions, {messages} messages, "
        f"{len(memory['questions'])} questions"
    )
    results: dict[str, list] = defaultdict(lambda: [0.0, 0.0, 0])
    with tempfile.TemporaryDirectory() as tmp:
        for life in lives:
            home = Path(tmp) / f"user{life}"
            part = {
                "sessions": [s for s in memory["sessions"] if s["life"] == life],
                "questions": [q for q in memory["questions"] if q["life"] == life],
            }
            config = Config(
                home=home,
                workspace=home,
                database_url=f"sqlite:///{home / 'hermes.db'}",
                embeddings=args.embeddings,
            )
            with open_store(config) as store:
                labels = load_memory(store, part)
                finish_indexing(store)
                for kind, (r5, r10, n) in evaluate_memory(
                    store, part, labels, args.verbose
                ).items():
                    results[kind][0] += r5 * n
                    results[kind][1] += r10 * n
                    results[kind][2] += n
        results = {kind: (r5 / n, r10 / n, n) for kind, (r5, r10, n) in results.items()}
        current = fingerprint(memory, skills) == SET_FINGERPRINT
        before = BEFORE if current else {}
        if not current:
            print(f"(stored before rows are for set {SET_FINGERPRINT}, this is another: not shown)")
        labels = [*before, "now"]
        print(f"{'':<17}" + "".join(f"{label:>16}" for label in labels))
        print(f"{'type':<12} {'n':>4}" + f"{'R@5':>8}{'R@10':>8}" * len(labels))
        for kind in sorted(results, key=lambda k: (k == "all", k)):
            r5, r10, n = results[kind]
            row = f"{kind:<12} {n:>4}"
            for label in before:
                old_r5, old_r10 = before[label].get(kind, (float("nan"), float("nan")))
                row += f"{old_r5:8.1f}{old_r10:8.1f}"
            print(row + f"{r5 * 100:8.1f}{r10 * 100:8.1f}")
        manager = SkillManager(
            Path(tmp) / "skills",
            embedder=make_embedder(config.with_overrides(embeddings="local"), "skills"),
        )
        install_skills(manager, skills)
        hits, per_task_ms = evaluate_skills(manager, skills, config.skills_in_prompt, args.verbose)
        earlier = "".join(
            f"{label} {count}/{len(skills['tasks'])}, "
            for label, count in (BEFORE_SKILLS if current else {}).items()
        )
        print(
            f"skills: {len(skills['skills'])} installed, right skill in the prompt for "
            f"{earlier}now {hits}/{len(skills['tasks'])} tasks ({per_task_ms:.1f} ms per task)"
        )


if __name__ == "__main__":
    main()
