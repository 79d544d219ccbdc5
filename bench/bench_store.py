"""Memory store speed: import rate, search and session-list latency at scale, DB size.

Generates its own data: a ChatGPT-format export for the import figure, then a
database of ``--messages`` messages (default 1,000,000) built with bulk
Core inserts through the real schema and triggers, then timed searches and
session-list pages through the public Store API.

    python bench/bench_store.py                  # the full 1M-message run
    python bench/bench_store.py --messages 50000 # a quick run
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from hermes.config import Config  # noqa: E402
from hermes.store import Store, deferred_index  # noqa: E402
from hermes.store.engine import write_transaction  # noqa: E402
from hermes.store.importers import import_file  # noqa: E402
from hermes.store.models import messages_table, sessions_table  # noqa: E402

_REAL_TEXT = """
nginx config server deploy docker kubernetes pod memory leak cache python rust test flaky
database index query postgres sqlite migration backup cron schedule timezone budget dinner
chicken rice birthday daughter trip flight hotel lisbon booking car brakes mechanic garden
tomato blight water coffee espresso grind ratio book club novel interview design review
email team release weekly plan monitoring alert disk space certificate renewal firewall
port proxy request response error timeout retry upload download script bash terminal
editor vim keyboard laptop upgrade price insurance rent landlord faucet apartment running
marathon knee hike trail lake fishing gift father mother sister brother friend meeting
"""
REAL_WORDS = _REAL_TEXT.split()
FILLERS = (
    "the",
    "a",
    "to",
    "and",
    "of",
    "I",
    "it",
    "is",
    "you",
    "that",
    "in",
    "for",
    "on",
    "with",
    "this",
    "my",
    "was",
)


def vocabulary(size: int, rng: random.Random) -> list[str]:
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"] + ["ion", "er", "al", "ing"]
    words = list(dict.fromkeys(REAL_WORDS))
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    rng.shuffle(words)
    return words


class TextMaker:
    """Zipf-distributed words, so posting lists look like real chat text."""

    def __init__(self, rng: random.Random, vocab_size: int = 30_000):
        self.rng = rng
        self.words = vocabulary(vocab_size, rng)
        weights = [1 / (rank**1.07) for rank in range(1, vocab_size + 1)]
        cumulative = list(itertools.accumulate(weights))
        fillers = FILLERS
        self.sentences = []
        for _ in range(40_000):
            picked = rng.choices(self.words, cum_weights=cumulative, k=rng.randint(5, 16))
            for _ in range(len(picked) // 3):
                picked.insert(rng.randrange(len(picked)), rng.choice(fillers))
            self.sentences.append(" ".join(picked).capitalize() + ".")

    def message(self, role: str) -> str:
        count = self.rng.randint(3, 12) if role == "tool" else self.rng.randint(1, 4)
        return " ".join(self.rng.choices(self.sentences, k=count))


def build_database(store: Store, total: int, per_session: int, maker: TextMaker) -> float:
    """Bulk-insert ``total`` messages through the real schema and triggers; seconds taken."""
    rng = maker.rng
    started = time.perf_counter()
    base = datetime(2022, 1, 1, tzinfo=UTC)
    made = 0
    session_number = 0
    batch_sessions: list[dict] = []
    batch_messages: list[dict] = []

    def flush() -> None:
        # Index rows written per batch, as imports write them (see store/deferred_index.py).
        with write_transaction(store.engine) as connection, deferred_index.deferred(connection):
            connection.execute(insert(sessions_table), batch_sessions)
            connection.execute(insert(messages_table), batch_messages)
        batch_sessions.clear()
        batch_messages.clear()

    while made < total:
        session_number += 1
        count = min(total - made, max(2, int(rng.gauss(per_session, per_session / 3))))
        start = base + timedelta(minutes=37 * session_number)
        batch_sessions.append(
            {
                "id": session_number,
                "uid": f"{session_number:032x}",
                "title": maker.message("user")[:60],
                "source": "cli",
                "created_at": start,
                "updated_at": start + timedelta(seconds=30 * count),
                "message_count": count,
                "summary": maker.message("assistant") if session_number % 3 == 0 else None,
            }
        )
        for position in range(count):
            role = ("user", "assistant", "tool", "assistant")[position % 4]
            batch_messages.append(
                {
                    "session_id": session_number,
                    "position": position,
                    "role": role,
                    "content": maker.message(role),
                    "tool_call_id": "call" if role == "tool" else None,
                    "tool_name": "run_bash" if role == "tool" else None,
                    "is_error": False,
                    "created_at": start + timedelta(seconds=30 * position),
                }
            )
        made += count
        if len(batch_messages) >= 20_000:
            flush()
            print(f"\r  {made:,} / {total:,} messages", end="", file=sys.stderr, flush=True)
    if batch_messages:
        flush()
    print(file=sys.stderr)
    return time.perf_counter() - started


def chatgpt_export(path: Path, conversations: int, per: int, maker: TextMaker) -> int:
    data = []
    for n in range(conversations):
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        for i in range(per):
            node = f"n{i}"
            mapping[node] = {
                "id": node,
                "parent": parent,
                "children": [],
                "message": {
                    "author": {"role": "user" if i % 2 == 0 else "assistant"},
                    "create_time": 1_700_000_000 + n * 1000 + i,
                    "content": {"content_type": "text", "parts": [maker.message("user")]},
                    "metadata": {},
                },
            }
            mapping[parent]["children"].append(node)
            parent = node
        data.append(
            {
                "id": f"conv-{n}",
                "title": f"Conversation {n}",
                "create_time": 1_700_000_000 + n * 1000,
                "update_time": 1_700_000_000 + n * 1000 + per,
                "current_node": parent,
                "mapping": mapping,
            }
        )
    path.write_text(json.dumps(data), encoding="utf-8")
    return conversations * per


def backfill(store: Store, home: Path, messages: int) -> None:
    """Embed everything (as `hermes db reindex` does) and print the rate and index sizes."""
    started = time.perf_counter()
    done = 0
    for progress in store.reindex():
        done = progress.done
        print(f"\r  embedded {done:,} / {progress.total:,}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    seconds = time.perf_counter() - started
    print(
        f"backfill: {done:,} messages embedded in {seconds:.1f} s "
        f"({done / max(seconds, 1e-9):,.0f} messages/s, {store.embedder.space})"
    )
    with store.engine.connect() as connection:
        raw = connection.connection.driver_connection
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        sizes = dict(
            raw.execute(
                "SELECT CASE WHEN name LIKE 'messages_context_fts%' THEN 'context index' "
                "WHEN name LIKE 'messages_fts%' THEN 'message index' "
                "WHEN name LIKE '%message_vectors%' THEN 'vectors' ELSE 'other' END, "
                "sum(pgsize) FROM dbstat GROUP BY 1"
            ).fetchall()
        )
    for name in ("message index", "context index", "vectors", "other"):
        size = sizes.get(name, 0)
        print(f"  {name:<14} {size / 1e6:9,.1f} MB ({size / messages:,.0f} bytes/message)")


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


def timed(fn, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return times


def report(name: str, times: list[float]) -> None:
    print(
        f"{name:<34} p50 {statistics.median(times):7.2f} ms   p95 {percentile(times, 95):7.2f} ms"
        f"   max {max(times):7.2f} ms   (n={len(times)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--per-session", type=int, default=40)
    parser.add_argument("--import-messages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--keep", type=Path, help="build the database here instead of a temp dir")
    parser.add_argument("--no-embed", action="store_true", help="skip the vector backfill")
    parser.add_argument(
        "--embeddings", default="local", help="HERMES_EMBEDDINGS for the run (local, fast)"
    )
    args = parser.parse_args()
    rng = random.Random(42)
    maker = TextMaker(rng)

    with tempfile.TemporaryDirectory() as tmp:
        home = args.keep or Path(tmp)
        home.mkdir(parents=True, exist_ok=True)

        # Import rate, through `hermes import chatgpt`'s code path (both passes).
        import_home = Path(tmp) / "import"
        import_config = Config(
            home=import_home,
            workspace=import_home,
            database_url=f"sqlite:///{import_home / 'h.db'}",
        )
        export = Path(tmp) / "conversations.json"
        count = chatgpt_export(export, max(1, args.import_messages // 20), 20, maker)
        with Store.open(import_config) as store:
            started = time.perf_counter()
            result = import_file(store, "chatgpt", export)
            seconds = time.perf_counter() - started
        size_mb = export.stat().st_size / 1e6
        print(
            f"import: {result.messages:,} messages ({result.conversations:,} conversations, "
            f"{size_mb:.1f} MB) in {seconds:.2f} s = {result.messages / seconds:,.0f} messages/s"
        )
        assert result.messages == count

        config = Config(
            home=home,
            workspace=home,
            database_url=f"sqlite:///{home / 'hermes.db'}",
            embeddings=args.embeddings,
        )
        with Store.open(config) as store:
            seconds = build_database(store, args.messages, args.per_session, maker)
            print(
                f"build: {args.messages:,} messages in {seconds:.1f} s ({args.messages / seconds:,.0f}/s, bulk Core inserts)"
            )
            with store.engine.connect() as connection:
                # Outside a transaction, so the WAL is folded into the file before sizing it.
                connection.connection.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db = home / "hermes.db"
            wal = home / "hermes.db-wal"
            size = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
            print(
                f"database size: {size / 1e6:,.1f} MB ({size / args.messages:,.0f} bytes/message)"
            )

            if not args.no_embed:
                backfill(store, home, args.messages)
            store.search("warm up the vector cache")  # the first search loads it
            words = maker.words
            common, middling, rare = words[:50], words[50:2000], words[2000:20000]
            questions = [
                f"when did I {rng.choice(middling)} the {rng.choice(middling)} {rng.choice(rare)}?"
                for _ in range(args.queries)
            ]
            report(
                "search (plain questions)",
                timed(lambda: store.search(questions.pop()), args.queries),
            )
            embedder = store.embedder
            store.embedder = None
            plain = [
                f"when did I {rng.choice(middling)} the {rng.choice(middling)} {rng.choice(rare)}?"
                for _ in range(args.queries)
            ]
            report(
                "search (plain, words only)",
                timed(lambda: store.search(plain.pop()), args.queries),
            )
            store.embedder = embedder
            heavy = [
                f"what about {rng.choice(common)} and {rng.choice(common)} with {rng.choice(middling)}"
                for _ in range(args.queries)
            ]
            report(
                "search (very common words)", timed(lambda: store.search(heavy.pop()), args.queries)
            )
            phrases = [
                f'"{rng.choice(middling)} {rng.choice(middling)}" {rng.choice(rare)}'
                for _ in range(args.queries)
            ]
            report(
                "search (phrase + word)", timed(lambda: store.search(phrases.pop()), args.queries)
            )
            hostile = ['NEAR("x" AND) -*', "((", "'; drop", "a" * 300, "😀 ü"] * (args.queries // 5)
            report(
                "search (syntax characters)",
                timed(lambda: store.search(hostile.pop()), len(hostile)),
            )
            last_session = store.latest_session().id
            filtered = [f"{rng.choice(middling)} {rng.choice(rare)}" for _ in range(args.queries)]
            report(
                "search (session filter)",
                timed(
                    lambda: store.search(filtered.pop(), session_id=rng.randint(1, last_session)),
                    args.queries,
                ),
            )
            report(
                "sessions list, first page (50)",
                timed(lambda: store.list_sessions(limit=50), args.queries),
            )
            _, cursor = store.list_sessions(limit=50)
            report(
                "sessions list, next page (50)",
                timed(lambda: store.list_sessions(limit=50, before=cursor), args.queries),
            )
            report(
                "session messages (one session)",
                timed(lambda: store.messages(rng.randint(1, last_session)), args.queries),
            )


if __name__ == "__main__":
    main()
