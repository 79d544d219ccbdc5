"""Request size with 5 vs 500 skills installed: progressive disclosure keeps it flat.

Builds what one model call carries for a sample message (system prompt, the
per-message skills index, tool specs, the message) in a temporary HERMES_HOME
with 5 and then 500 generated skills, and prints the byte counts side by side,
plus how long ranking the skills for one message takes.

    python bench/bench_prompt_size.py
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from hermes.agent.prompts import build_system_prompt, build_turn_context
from hermes.config import Config
from hermes.embeddings import make_embedder
from hermes.profile import ProfileMemory
from hermes.skills import SkillManager

MESSAGE = "Can you deploy my flask app to railway and check the logs afterwards?"
VERBS = [
    "deploy",
    "backup",
    "rotate",
    "migrate",
    "debug",
    "profile",
    "index",
    "compress",
    "audit",
    "sync",
]
THINGS = [
    "postgres",
    "redis",
    "nginx",
    "flask",
    "django",
    "railway",
    "docker",
    "kubernetes",
    "logs",
    "certificates",
    "cron",
    "s3",
    "sqlite",
    "grafana",
    "celery",
    "webpack",
    "pytest",
    "terraform",
    "ssh",
    "dns",
]


def tool_specs() -> list[dict]:
    try:
        from hermes.tools import all_tools

        return [asdict(spec) for spec in all_tools().specs()]
    except ImportError:  # some tool modules may not exist yet: use ours
        from hermes.tools import profile, skills

        tools = [profile.remember, skills.list_skills, skills.use_skill, skills.create_skill]
        return [asdict(t.spec) for t in tools]


def install(manager: SkillManager, count: int, rng: random.Random) -> None:
    have = len(manager.list())
    if have == 0:
        manager.create(
            "deploy-flask-railway",
            "Deploy a Flask app to Railway with gunicorn; use when shipping a Flask service.",
            "1. Add gunicorn.\n2. Write a Procfile.\n3. railway up, then railway logs.",
            triggers=["railway", "deploy", "flask"],
        )
    for i in range(max(have, 1), count):
        verb, thing, other = rng.choice(VERBS), rng.choice(THINGS), rng.choice(THINGS)
        manager.create(
            f"{verb}-{thing}-{i}",
            f"{verb.title()} {thing} together with {other}; use when the user asks to {verb} {thing}.",
            "\n".join(f"{n}. Step {n} for {verb} {thing} ({other})." for n in range(1, 12)),
            triggers=[verb, thing, other],
        )


def measure(home: Path, count: int, rng: random.Random) -> dict:
    manager = SkillManager(home / "skills")
    install(manager, count, rng)
    profile = ProfileMemory(home / "memory")
    specs = tool_specs()
    system = build_system_prompt(
        workspace=home / "workspace",
        profile_snapshot=profile.snapshot(),
        tool_names=[spec["name"] for spec in specs],
        skill_count=len(manager.list()),
        now=datetime(2025, 1, 1),
    )
    embedder = make_embedder(
        Config(home=home, workspace=home, database_url="sqlite:///unused.db"), "skills"
    )
    first = SkillManager(home / "skills", embedder=embedder)
    start = time.perf_counter()
    first.relevant(MESSAGE)  # embeds every skill once (then cached on disk)
    embed_all = time.perf_counter() - start
    fresh = SkillManager(home / "skills", embedder=embedder)  # as in a new process
    start = time.perf_counter()
    fresh.relevant(MESSAGE)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    runs = 20
    for _ in range(runs):
        relevant = fresh.relevant(MESSAGE, limit=8)
    warm = (time.perf_counter() - start) / runs
    context = build_turn_context(relevant) or ""
    request = {
        "model": "bench",
        "system": system,
        "messages": [{"role": "user", "content": f"{context}\n\n{MESSAGE}".strip()}],
        "tools": specs,
    }
    return {
        "skills": count,
        "system": len(system.encode()),
        "context": len(context.encode()),
        "tools": len(json.dumps(specs).encode()),
        "request": len(json.dumps(request).encode()),
        "indexed": len(relevant),
        "top": relevant[0].name if relevant else "-",
        "embed_ms": embed_all * 1000,
        "cold_ms": cold * 1000,
        "warm_ms": warm * 1000,
    }


def main() -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        rows = [measure(home, 5, rng), measure(home, 500, rng)]
    print(f"sample message: {MESSAGE!r}\n")
    print(f"{'':28}{'5 skills':>22}{'500 skills':>22}")
    for key, label in [
        ("system", "system prompt (bytes)"),
        ("context", "skills index (bytes)"),
        ("tools", "tool specs (bytes)"),
        ("request", "whole request (bytes)"),
        ("indexed", "skills in the index"),
        ("top", "best match"),
    ]:
        a, b = rows[0][key], rows[1][key]
        print(f"{label:28}{a!s:>22}{b!s:>22}")
    for key, label in [
        ("embed_ms", "rank, embedding all skills"),
        ("cold_ms", "rank, new process (ms)"),
        ("warm_ms", "rank, warm cache (ms)"),
    ]:
        print(f"{label:28}{rows[0][key]:>22.2f}{rows[1][key]:>22.2f}")
    growth = rows[1]["request"] / rows[0]["request"]
    print(f"\nrequest growth from 5 to 500 skills: x{growth:.2f}")


if __name__ == "__main__":
    main()
