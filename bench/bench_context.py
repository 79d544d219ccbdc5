"""Request size and prompt-cache share across a long scripted session, compaction vs none.

Runs the scripted session of tests/fakes/long_session.py (every turn reads a
~6,000-character file, then answers) through the real loop, the real SDK and
the fake server, twice:

* compaction: HERMES_CONTEXT_WINDOW=--window, and the server refuses anything
  larger, like the real APIs;
* baseline: no compaction (a window no session reaches) and no size check.

For every model request it measures the prompt in the server's tokens (JSON
characters / 4) and the part of it that repeats the previous request's prefix
byte for byte: what a provider's prompt cache can serve. Run from the
repository root::

    python bench/bench_context.py [--turns 400] [--window 16000] [--wire anthropic]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hermes.config import Config
from hermes.runtime import Runtime
from tests.fakes import llm_wire as wf
from tests.fakes.llm_server import DEFAULT_MODELS, FakeLLM
from tests.fakes.long_session import LongSession, is_summarizer, user_text, write_files

NO_LIMIT = 1_000_000_000


def prefix_tokens(previous: dict | None, current: dict) -> int:
    """Tokens of ``current`` that repeat ``previous`` from the start (system, tools, messages)."""
    if previous is None:
        return 0
    same = 0
    for key in ("system", "tools"):
        if previous.get(key) != current.get(key):
            return same
        same += len(json.dumps(current.get(key)))
    old, new = previous.get("messages") or [], current.get("messages") or []
    for a, b in zip(old, new, strict=False):
        if _plain(a) != _plain(b):
            break
        same += len(json.dumps(b))
    return same // wf.CHARS_PER_TOKEN


def _plain(message: dict) -> dict:
    """A message without Anthropic's cache_control marks (they move to the newest block)."""
    content = message.get("content")
    if isinstance(content, list):
        content = [{k: v for k, v in block.items() if k != "cache_control"} for block in content]
    return {**message, "content": content}


class _Stats:
    """Request sizes and reused prefixes, collected as the session runs."""

    def __init__(self, wire: str):
        self.wire = wire
        self.sizes: list[int] = []
        self.cached: list[int] = []
        self.summaries = 0
        self.summary_tokens = 0
        self.first_over: int | None = None
        self.previous: dict | None = None

    def add(self, requests) -> None:
        for request in requests:
            body = request.json
            if not isinstance(body, dict) or "messages" not in body:
                continue
            tokens = wf.prompt_tokens(body)
            if is_summarizer(self.wire, body):
                self.summaries += 1
                self.summary_tokens += tokens
                continue
            self.sizes.append(tokens)
            self.cached.append(prefix_tokens(self.previous, body))
            self.previous = body
            if self.first_over is None and tokens > 200_000:
                self.first_over = len(self.sizes)


def run(turns: int, window: int | None, wire: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp, "home"), Path(tmp, "workspace")
        home.mkdir()
        workspace.mkdir()
        write_files(workspace, turns)
        fake = FakeLLM().start()
        fake.context_window = window
        fake.responder = LongSession(wire)
        config = Config(
            home=home,
            workspace=workspace,
            database_url=f"sqlite:///{home / 'hermes.db'}",
            provider=wire,
            model=DEFAULT_MODELS[wire],
            api_key="bench",
            base_url=fake.base_url(wire),
            max_retries=0,
            context_window=window or NO_LIMIT,
        )
        runtime = Runtime(config)
        stats = _Stats(wire)
        started = time.perf_counter()
        try:
            agent = runtime.agent()
            session_id = runtime.store.create_session().id
            failed_at = None
            for turn in range(1, turns + 1):
                events = list(agent.run_turn(session_id, user_text(turn)))
                # Measured turn by turn, so the server's request log stays small.
                stats.add(fake.requests)
                fake.requests.clear()
                if events[-1].stop_reason != "end_turn":
                    failed_at = turn
                    break
            compactions = runtime.store.compactions(session_id)
        finally:
            runtime.close()
            fake.stop()
        seconds = time.perf_counter() - started
    sizes, cached = stats.sizes, stats.cached
    return {
        "seconds": seconds,
        "failed_at": failed_at,
        "requests": len(sizes),
        "mean": sum(sizes) / len(sizes),
        "max": max(sizes),
        "last": sizes[-1],
        "total": sum(sizes) + stats.summary_tokens,
        "cache_share": sum(cached) / sum(sizes),
        "summaries": stats.summaries,
        "compactions": len(compactions),
        "over_200k_at_request": stats.first_over,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--window", type=int, default=16_000)
    parser.add_argument("--wire", choices=("anthropic", "openai"), default="anthropic")
    args = parser.parse_args()

    run(2, args.window, args.wire)  # warm up: imports and first connections off the clock
    compacted = run(args.turns, args.window, args.wire)
    baseline = run(args.turns, None, args.wire)
    print(
        f"{args.turns} turns, {args.wire} wire, tokens as the server counts them (JSON chars / 4)"
    )
    print(f"{'':34}{'compaction':>14}{'no compaction':>16}")
    rows = [
        ("window", f"{args.window:,}", "none"),
        (
            "turns completed",
            compacted["failed_at"] or args.turns,
            baseline["failed_at"] or args.turns,
        ),
        ("model requests (turns)", compacted["requests"], baseline["requests"]),
        ("summary requests", compacted["summaries"], baseline["summaries"]),
        ("compactions stored", compacted["compactions"], baseline["compactions"]),
        ("request size, mean", f"{compacted['mean']:,.0f}", f"{baseline['mean']:,.0f}"),
        ("request size, max", f"{compacted['max']:,}", f"{baseline['max']:,}"),
        ("request size, last", f"{compacted['last']:,}", f"{baseline['last']:,}"),
        ("tokens sent in all", f"{compacted['total']:,}", f"{baseline['total']:,}"),
        (
            "cache-hit share (prefix reused)",
            f"{compacted['cache_share']:.1%}",
            f"{baseline['cache_share']:.1%}",
        ),
        (
            "uncached tokens sent",
            f"{compacted['total'] * (1 - compacted['cache_share']):,.0f}",
            f"{baseline['total'] * (1 - baseline['cache_share']):,.0f}",
        ),
        ("wall time, s", f"{compacted['seconds']:.1f}", f"{baseline['seconds']:.1f}"),
    ]
    for name, a, b in rows:
        print(f"{name:34}{a!s:>14}{b!s:>16}")
    if baseline["over_200k_at_request"]:
        print(
            f"without compaction the request passes a 200,000-token window at request "
            f"{baseline['over_200k_at_request']}: a real session would end there."
        )
    ratio = baseline["total"] / compacted["total"]
    print(f"compaction sends {ratio:.1f}x fewer tokens in all")


if __name__ == "__main__":
    main()
