"""How much the providers add on top of the wire: stream a long scripted answer
from the fake LLM server through each real SDK and print the figures.

    python bench/bench_providers.py [--deltas 20000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hermes.events import TextDelta, ToolCall
from hermes.messages import Message, ModelRequest
from hermes.providers.base import ProviderSettings
from hermes.providers.registry import provider_class
from tests.fakes.llm_server import DEFAULT_MODELS, FakeLLM


def run(fake: FakeLLM, wire: str, deltas: int) -> None:
    settings = ProviderSettings(
        model=DEFAULT_MODELS[wire], api_key="k", base_url=fake.base_url(wire)
    )
    provider = provider_class(wire)(settings)
    request = ModelRequest(model=settings.model, system="s", messages=(Message("user", "hi"),))
    args = {"path": "x" * 20_000}
    pieces = -(-len(json.dumps(args)) // 4)
    fake.reply("abcd" * deltas, chunk_size=4, tool_calls=[("write_file", args)], args_chunk_size=4)
    started = time.perf_counter()
    first = None
    count = 0
    for chunk in provider.stream(request):
        if first is None:
            first = time.perf_counter() - started
        if isinstance(chunk, TextDelta | ToolCall):
            count += 1
    total = time.perf_counter() - started
    print(
        f"{wire:9s} {deltas} text deltas + a tool call in {pieces} argument pieces: "
        f"first chunk {first * 1000:.1f} ms, total {total:.2f} s, "
        f"{(deltas + pieces) / total:,.0f} wire chunks/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=20_000)
    args = parser.parse_args()
    with FakeLLM() as fake:
        for wire in ("anthropic", "openai"):
            run(fake, wire, 100)  # warm up: SDK import and connection
            run(fake, wire, args.deltas)


if __name__ == "__main__":
    main()
