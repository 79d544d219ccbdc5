"""A scripted long session for the fake LLM: every turn reads a big file, then answers.

The replies depend on the request (``FakeLLM.responder``), not on a queue,
because compaction adds summarizer calls whose timing the script cannot know:

* a request whose system prompt is the compaction prompt gets a summary that
  keeps every "Remember:" line it is shown (the model's job, done simply);
* a request ending in a user message of turn N reads ``big-N.txt`` (a large
  tool output), with call id ``call_N`` so ids never repeat;
* a request ending in that tool result gets a short answer;
* the question "what was the launch code?" is answered from the request when
  the code is in it (the summary carried it), else by calling search_memory.

Used by tests/test_compaction_long.py and bench/bench_context.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import Reply

FACT = "the launch code is 4417-ALPHA"
FACT_TURN = 3
QUESTION = "What was the launch code I told you about at the start?"
BIG_FILE_CHARS = 6_000
_TURN = re.compile(r"\bturn (\d+):")
_FILE = re.compile(r"line 0 of file (\d+):")


def user_text(turn: int) -> str:
    if turn == FACT_TURN:
        return f"turn {turn}: Remember: {FACT}. Now read big-{turn}.txt please."
    return f"turn {turn}: please read big-{turn}.txt and tell me how long it is."


def write_files(workspace: Path, turns: int) -> None:
    """One distinct big file per turn (varied text, so it is not one repeated token)."""
    for turn in range(1, turns + 1):
        lines = [
            f"line {n} of file {turn}: status={n * turn % 97} host=web-{n % 13} ok"
            for n in range(BIG_FILE_CHARS // 50)
        ]
        (workspace / f"big-{turn}.txt").write_text("\n".join(lines) + "\n")


def system_text(wire: str, body: dict[str, Any]) -> str:
    if wire == "anthropic":
        system = body.get("system") or []
        return "".join(b.get("text", "") for b in system) if isinstance(system, list) else system
    first = (body.get("messages") or [{}])[0]
    return first.get("content") or "" if first.get("role") == "system" else ""


def is_summarizer(wire: str, body: dict[str, Any]) -> bool:
    """Whether a request is a compaction's summary call (by its system prompt)."""
    return "compacting the context" in system_text(wire, body)


def last_message(wire: str, body: dict[str, Any]) -> tuple[str, str]:
    """(kind, text) of the request's last message: kind is "user" or "tool"."""
    last = (body.get("messages") or [{}])[-1]
    if wire == "openai":
        return ("tool" if last.get("role") == "tool" else "user"), str(last.get("content") or "")
    blocks = last.get("content")
    if isinstance(blocks, str):
        return "user", blocks
    if any(b.get("type") == "tool_result" for b in blocks):
        return "tool", str(blocks[-1].get("content"))
    return "user", "".join(b.get("text", "") for b in blocks if b.get("type") == "text")


class LongSession:
    """The responder. ``summaries`` and ``summarizer_inputs`` record the compaction calls."""

    def __init__(self, wire: str):
        self.wire = wire
        self.summarizer_inputs: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply | None:
        import json

        if is_summarizer(self.wire, body):
            prompt = json.dumps(body.get("messages"))
            self.summarizer_inputs.append(prompt)
            kept = sorted(set(re.findall(r"Remember: [^.\"\\]+", prompt)))
            bullets = "\n".join(f"- the user said: {k}" for k in kept) or "- none"
            return Reply(
                text=(
                    "## Asked\n- read big files, one per turn\n## Done\n- read them\n"
                    f"## Files touched\n- big-N.txt (read)\n## Decisions\n- none\n"
                    f"## Open threads\n- none\n## Facts to keep\n{bullets}\n"
                )
            )
        kind, text = last_message(self.wire, body)
        whole = json.dumps(body.get("messages"))
        if kind == "user" and QUESTION in text:
            if "4417-ALPHA" in whole:
                return Reply(text="You told me: the launch code is 4417-ALPHA.")
            return Reply(tool_calls=[("search_memory", {"query": "launch code"}, "call_q")])
        if kind == "tool" and "launch code" in text.lower() and "results for" in text:
            found = "4417-ALPHA" if "4417-ALPHA" in text else "unknown"
            return Reply(text=f"From memory: the launch code is {found}.")
        match = _TURN.search(text)
        if kind == "user" and match:
            turn = int(match.group(1))
            call = ("read_file", {"path": f"big-{turn}.txt"}, f"call_{turn}")
            return Reply(tool_calls=[call])
        match = _FILE.search(text)
        if kind == "tool" and match:
            return Reply(text=f"Turn {match.group(1)}: the file has {BIG_FILE_CHARS // 50} lines.")
        return None
