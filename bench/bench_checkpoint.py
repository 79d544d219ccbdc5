"""What saving the streaming answer costs: one turn of a long streamed answer,
with the loop's once-a-second checkpoints and with them switched off.

The answer is streamed slowly enough (``--seconds``) to span several
checkpoints, like a real model; the figure to watch is the ratio of the two
turn times (it should stay close to 1.0) and how many writes were made.

    python bench/bench_checkpoint.py [--seconds 4] [--deltas 2000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hermes.agent import loop
from hermes.config import Config
from hermes.runtime import Runtime
from tests.fakes.llm_server import FakeLLM


def one_turn(fake: FakeLLM, home: Path, deltas: int, seconds: float) -> tuple[float, int]:
    """Seconds for the turn, and how many checkpoint writes it made."""
    config = Config(
        home=home,
        workspace=home,
        database_url=f"sqlite:///{home / 'hermes.db'}",
        **fake.config_overrides("anthropic"),
    )
    runtime = Runtime(config)
    writes = 0
    checkpoint = runtime.store.checkpoint

    def counted(*args, **kwargs):
        nonlocal writes
        writes += 1
        return checkpoint(*args, **kwargs)

    runtime.store.checkpoint = counted
    session_id = runtime.store.create_session().id
    # Spread over ``seconds``, like a model generating.
    fake.reply("word " * deltas, chunk_size=5, chunk_delay=seconds / deltas)
    started = time.perf_counter()
    events = list(runtime.agent().run_turn(session_id, "write a long answer"))
    elapsed = time.perf_counter() - started
    assert events[-2].type == "usage" and events[-1].stop_reason == "end_turn"
    runtime.close()
    return elapsed, writes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as tmp:
        one_turn(fake, Path(tmp) / "warm", 10, 0.1)  # imports and migrations, not measured
        on, on_writes = one_turn(fake, Path(tmp) / "on", args.deltas, args.seconds)
        saved = loop.CHECKPOINT_SECONDS
        loop.CHECKPOINT_SECONDS = float("inf")
        try:
            off, off_writes = one_turn(fake, Path(tmp) / "off", args.deltas, args.seconds)
        finally:
            loop.CHECKPOINT_SECONDS = saved
    print(f"answer: {args.deltas} deltas over ~{args.seconds:.0f} s")
    print(f"with checkpoints:    {on:6.2f} s, {on_writes} checkpoint writes")
    print(f"without checkpoints: {off:6.2f} s, {off_writes} checkpoint writes")
    print(f"ratio (with / without): {on / off:.3f}")


if __name__ == "__main__":
    main()
