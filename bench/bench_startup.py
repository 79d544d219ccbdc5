"""Cold start of `hermes --help` next to a bare `python -c pass`.

The SDKs, SQLAlchemy and rich are imported lazily, so the CLI should cost
little more than the interpreter itself. Prints medians over several runs.

    python bench/bench_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def measure(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    baseline = measure([sys.executable, "-c", "pass"], args.runs)
    help_ms = measure([sys.executable, "-m", "hermes", "--help"], args.runs)
    chat_help_ms = measure([sys.executable, "-m", "hermes", "chat", "--help"], args.runs)
    heavy = measure([sys.executable, "-c", "import anthropic, openai, sqlalchemy, rich"], args.runs)
    print(f"python -c pass             {baseline:7.1f} ms")
    print(f"hermes --help              {help_ms:7.1f} ms  ({help_ms / baseline:.1f}x)")
    print(f"hermes chat --help         {chat_help_ms:7.1f} ms  ({chat_help_ms / baseline:.1f}x)")
    print(f"import SDKs (avoided)      {heavy:7.1f} ms  ({heavy / baseline:.1f}x)")


if __name__ == "__main__":
    main()
