"""Generate tests/data/memory_eval.json: multi-session chats with labelled questions.

Each "fact" is a short exchange planted in its own session among realistic
filler turns (dev chatter, tool output, small talk) that reuse the same
vocabulary, so the questions, asked the way people ask ("when did I fix the
nginx config?"), must beat lexical distractors. Every question names the
message(s) holding its answer as ``[session_key, message_index]`` or
``[session_key, "summary"]``.

    python bench/make_memory_eval.py            # writes tests/data/memory_eval.json
    python bench/make_memory_eval.py --filler 400 -o /tmp/big.json   # larger haystack
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

# (title, user message, assistant reply, question, evidence index: 0 user / 1 assistant / "both")
FACTS = [
    (
        "Reverse proxy 404s",
        "I finally fixed the nginx config: proxy_pass was missing the trailing slash, so every /api request returned 404.",
        "Good catch. With the slash nginx strips the /api prefix before passing the request upstream.",
        "when did I fix the nginx config?",
        0,
    ),
    (
        "Birthday planning",
        "My daughter Maya turns seven on March 14th, I want to plan something small at the park.",
        "A picnic at the park sounds lovely for a seventh birthday. Want a checklist?",
        "when is Maya's birthday?",
        0,
    ),
    (
        "Postgres tuning",
        "The reporting query was slow until we added a composite index on orders(customer_id, created_at).",
        "That index lets Postgres read the rows in order and skip the sort step entirely.",
        "which index sped up the slow reporting query",
        0,
    ),
    (
        "Car maintenance",
        "The mechanic said the Corolla needs new brake pads before winter, about 240 euros.",
        "Worth doing before the roads get icy. Maybe ask whether the rotors are fine too.",
        "how much were the brake pads going to cost",
        0,
    ),
    (
        "Learning Rust",
        "I keep fighting the borrow checker when I store references inside a struct.",
        "Storing references needs lifetime parameters; often it is simpler to own the data with String or Arc.",
        "what did you suggest about lifetimes and references in structs?",
        1,
    ),
    (
        "Kubernetes OOM",
        "Our worker pods kept getting OOMKilled at exactly 512Mi during the nightly batch.",
        "Raise the memory limit to 1Gi and stream the CSV instead of loading it whole; the batch loads everything at once.",
        "why were the worker pods getting killed at night",
        "both",
    ),
    (
        "Sourdough",
        "My sourdough starter smells like nail polish remover, is it dead?",
        "That acetone smell means it is hungry, not dead. Feed it twice a day at a 1:1:1 ratio for a few days.",
        "what does an acetone smell mean for a sourdough starter",
        1,
    ),
    (
        "Trip to Lisbon",
        "We booked the Lisbon flights for May 3rd, TAP, returning on the 10th.",
        "Nice! Tram 28 and Belem are classics; book the Jeronimos monastery tickets ahead.",
        "what dates are the Lisbon flights",
        0,
    ),
    (
        "Python packaging",
        "Switched the project from setup.py to pyproject.toml with hatchling as the build backend.",
        "Hatchling is a good pick; remember to move the package data globs into the tool.hatch section.",
        "which build backend did we pick for packaging",
        0,
    ),
    (
        "Home network",
        "The Wi-Fi drops every evening; the router log shows DFS radar events on channel 52.",
        "DFS channels must vacate when radar is detected. Pin the 5 GHz band to channel 36 or 44.",
        "which wifi channel should I use to stop the evening drops",
        1,
    ),
    (
        "Running",
        "Ran my first half marathon in 1:52:40, knees held up fine.",
        "Congratulations, that is a strong first half! Plan an easy recovery week.",
        "what was my half marathon time",
        0,
    ),
    (
        "Git mishap",
        "I accidentally committed the .env file with the Stripe secret key to the public repo.",
        "Rotate the Stripe key right away, then purge it from history with git filter-repo and force-push.",
        "what should I do after leaking the stripe key in git",
        1,
    ),
    (
        "Terraform state",
        "Terraform state got locked after a CI job was cancelled halfway through apply.",
        "Run terraform force-unlock with the lock ID from the error, after confirming no other apply is running.",
        "how do I release a stuck terraform lock",
        1,
    ),
    (
        "Dentist",
        "Dentist appointment moved to Thursday the 22nd at 8:30 because of the crown fitting.",
        "Noted. Want a reminder the evening before?",
        "when is the crown fitting appointment",
        0,
    ),
    (
        "Book club",
        "For book club this month we're reading 'Piranesi' by Susanna Clarke.",
        "Piranesi is wonderful; the house with its endless halls is a great discussion topic.",
        "which novel is the book club reading",
        0,
    ),
    (
        "Flaky tests",
        "The flaky test was a race: two threads shared one SQLite connection without a lock.",
        "Give each thread its own connection or guard the shared one with a mutex; SQLite connections are not thread-safe by default.",
        "what caused the flaky test",
        0,
    ),
    (
        "Budget",
        "We agreed to cap eating out at 300 dollars a month starting in September.",
        "A clear monthly cap helps. A separate card for restaurants makes it easy to track.",
        "what limit did we set for restaurants each month",
        0,
    ),
    (
        "Garden",
        "Tomatoes have yellow leaves at the bottom with brown spots, spreading upward.",
        "That pattern sounds like early blight. Remove affected leaves, water at the base and mulch.",
        "what disease do the tomato plants have",
        1,
    ),
    (
        "Docker build",
        "The Docker image went from 1.2GB to 180MB after switching to a multi-stage build on python:3.12-slim.",
        "Multi-stage builds keep compilers out of the final image; the slim base does the rest.",
        "how did we shrink the docker image",
        0,
    ),
    (
        "Apartment",
        "The landlord agreed to fix the leaking bathroom faucet next Tuesday and lower rent by 50 for the hassle.",
        "Good outcome. Get the rent change in writing by email.",
        "what did the landlord agree to about the rent",
        0,
    ),
    (
        "Regex help",
        "I need a regex that matches ISO dates like 2024-03-01 but not 2024-13-01.",
        "Try ^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$ which bounds the month and day.",
        "the regex for validating ISO dates",
        1,
    ),
    (
        "Interview prep",
        "The interview with Datadog is on the 9th, system design round with two engineers.",
        "For system design practice, rehearse a metrics ingestion pipeline; it fits their product.",
        "when is my datadog interview",
        0,
    ),
    (
        "Cat health",
        "Miso the cat has been drinking a lot more water and the vet wants bloodwork to check her kidneys.",
        "Increased thirst is worth checking. Bring a fresh urine sample if you can.",
        "why is the vet doing bloodwork on Miso",
        0,
    ),
    (
        "SSH keys",
        "Generated a new ed25519 key for the homelab and disabled password login in sshd_config.",
        "Also set PermitRootLogin no and restart sshd, keeping one session open in case of mistakes.",
        "which ssh key type did I generate for the homelab",
        0,
    ),
    (
        "Spanish",
        "Practicing Spanish subjunctive: 'espero que tengas un buen viaje' finally clicked.",
        "Exactly, esperar que triggers the subjunctive: tengas, not tienes.",
        "which spanish phrase helped with the subjunctive",
        0,
    ),
    (
        "Cron job",
        "The backup cron ran at 3am UTC but the server is in Chicago, so it overlapped with peak traffic.",
        "Schedule it at 09:00 UTC instead, which is 3 or 4am Central depending on daylight saving.",
        "what time should the backup cron run",
        1,
    ),
    (
        "Coffee",
        "Dialed in the espresso: 18g in, 36g out, 28 seconds, grind setting 12 on the Niche.",
        "That 1:2 ratio in under 30 seconds is a textbook shot.",
        "what grind setting works for my espresso",
        0,
    ),
    (
        "API pagination",
        "We chose cursor pagination for /api/events because offset pages skipped rows during inserts.",
        "Cursors keyed on (created_at, id) stay stable while new rows arrive.",
        "why did we choose cursor pagination",
        0,
    ),
    (
        "Electric bill",
        "Electric bill jumped to 210 dollars; the old chest freezer in the garage is the likely culprit.",
        "Old freezers can draw a lot. A plug-in power meter will confirm it within a day.",
        "why was the electricity bill so high",
        0,
    ),
    (
        "TLS renewal",
        "Let's Encrypt renewal failed because port 80 is blocked by the new firewall rule.",
        "The HTTP-01 challenge needs port 80; open it or switch to the DNS-01 challenge.",
        "why did the certificate renewal fail",
        0,
    ),
    (
        "Gift ideas",
        "For dad's 60th I'm thinking of a framed print of the lake where he grew up fishing.",
        "That is a thoughtful gift. A local print shop can do archival framing.",
        "gift idea for dad's sixtieth",
        0,
    ),
    (
        "Memory leak",
        "Found the memory leak: the LRU cache decorator on a method kept every instance alive.",
        "functools.lru_cache on methods holds self in the cache; use a per-instance cache or cached_property.",
        "what was causing the memory leak",
        0,
    ),
    (
        "Hiking",
        "We hiked Mount Tallac, 10 miles round trip, the view of Emerald Bay was unreal.",
        "Tallac is a classic Tahoe hike. Early starts avoid the afternoon heat.",
        "how long was the Tallac hike",
        0,
    ),
    (
        "Vim",
        "I remapped caps lock to escape and it changed how I use vim completely.",
        "A lot of people do that; some map it to control when held and escape when tapped.",
        "what key did I remap to escape",
        0,
    ),
    (
        "Insurance",
        "Renter's insurance renewal is due on October 1st, quote came in at 14 a month.",
        "That's a fair price. Check the liability limit before renewing.",
        "when is the renters insurance renewal due",
        0,
    ),
]

# (title, summary, question): facts that live only in a session's summary.
SUMMARY_FACTS = [
    (
        "Weekly review",
        "I helped the user plan the move to Denver in August; they want a two-bedroom near Washington Park.",
        "where is the user moving in August",
    ),
    (
        "Side project",
        "We sketched a habit-tracking app in SvelteKit with a Supabase backend; the user wants streak notifications.",
        "what stack was chosen for the habit tracker app",
    ),
    (
        "Health notes",
        "The user is cutting caffeine after 2pm to sleep better and is tracking sleep with an Oura ring.",
        "which device tracks the user's sleep",
    ),
]

FILLER_USER = [
    "Can you check why the server config reload failed again?",
    "Remind me how to fix merge conflicts in a rebase.",
    "What's a good name for a config loader module?",
    "Can you look at the deploy logs? Something is off after the update.",
    "I need to write an email to the team about the release date.",
    "How do I make the tests run faster in CI?",
    "Let's refactor the settings parsing, it's getting messy.",
    "What's the difference between a process and a thread again?",
    "Is it worth upgrading to the new laptop this year?",
    "Can you summarise this article about remote work for me?",
    "Any tips for a good weekly planning routine?",
    "I want to set up monitoring for the home server.",
    "The build is broken on main, can you take a look?",
    "How should I structure the database migrations?",
    "I'm thinking about the trip budget for next month.",
    "What should I cook for dinner with chicken and rice?",
    "Can you explain how the cache invalidation works in our app?",
    "I need to fix the flaky login page redirect.",
    "What time zone is the meeting in? I keep getting it wrong.",
    "Help me draft a birthday message for a coworker.",
]
FILLER_ASSISTANT = [
    "Sure. Let me look at the relevant files first.",
    "Here's a short plan: reproduce it, write a failing test, then fix and verify.",
    "The simplest option is to keep the configuration in one module and validate it at startup.",
    "I checked the logs: the error started after the last deploy, around the config change.",
    "That depends on your budget and how long the current machine will last.",
    "Running the tests in parallel and caching dependencies usually halves CI time.",
    "A process has its own memory; threads share the memory of one process.",
    "I'd suggest a 20-minute weekly review on Sunday: calendar, tasks, and one priority.",
    "Done. The fix is in place and the tests pass.",
    "Good idea. Migrations should be small, one change each, and tested on a copy of real data.",
]
TOOL_OUTPUTS = [
    "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\nnginx: configuration file /etc/nginx/nginx.conf test is successful",
    "PASSED tests/test_api.py::test_pagination\nFAILED tests/test_login.py::test_redirect - AssertionError",
    "docker build -t app . \nStep 1/12 : FROM python:3.12\nSuccessfully built 3f2a9c1e",
    "kubectl get pods\nworker-7d9f 1/1 Running 0 3h\napi-5c8b 1/1 Running 2 3h",
    "git log --oneline\n4e1f2a3 Fix config reload\n9b8c7d6 Update deploy script",
    "terraform plan\nNo changes. Your infrastructure matches the configuration.",
    "crontab -l\n0 3 * * * /usr/local/bin/backup.sh",
    "SELECT count(*) FROM orders;\n count\n-------\n 18234",
    "curl -I https://example.com\nHTTP/2 200\nserver: nginx",
    "df -h\n/dev/sda1  220G  180G  40G  82% /",
]


def build(filler_sessions: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    sessions = []
    questions = []

    def filler_turns(count: int) -> list[dict]:
        turns = []
        for _ in range(count):
            turns.append({"role": "user", "content": rng.choice(FILLER_USER)})
            if rng.random() < 0.4:
                turns.append({"role": "tool", "content": rng.choice(TOOL_OUTPUTS)})
            turns.append({"role": "assistant", "content": rng.choice(FILLER_ASSISTANT)})
        return turns

    for n, (title, user, assistant, question, where) in enumerate(FACTS):
        key = f"fact{n:02d}"
        before = filler_turns(rng.randint(1, 4))
        after = filler_turns(rng.randint(1, 4))
        start = len(before)
        messages = [
            *before,
            {"role": "user", "content": user},
            {"role": "assistant", "content": assistant},
            *after,
        ]
        evidence = (
            [[key, start]]
            if where == 0
            else [[key, start + 1]]
            if where == 1
            else [[key, start], [key, start + 1]]
        )
        sessions.append({"key": key, "title": title, "summary": None, "messages": messages})
        questions.append({"question": question, "evidence": evidence})

    for n, (title, summary, question) in enumerate(SUMMARY_FACTS):
        key = f"summary{n:02d}"
        sessions.append(
            {"key": key, "title": title, "summary": summary, "messages": filler_turns(3)}
        )
        questions.append({"question": question, "evidence": [[key, "summary"]]})

    for n in range(filler_sessions):
        sessions.append(
            {
                "key": f"filler{n:03d}",
                "title": rng.choice(FILLER_USER)[:40],
                "summary": None,
                "messages": filler_turns(rng.randint(2, 8)),
            }
        )
    rng.shuffle(sessions)
    return {"sessions": sessions, "questions": questions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filler", type=int, default=40, help="sessions of pure filler")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "tests" / "data" / "memory_eval.json",
    )
    args = parser.parse_args()
    data = build(args.filler)
    args.output.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    count = sum(len(s["messages"]) for s in data["sessions"])
    print(
        f"wrote {args.output}: {len(data['sessions'])} sessions, {count} messages, {len(data['questions'])} questions"
    )


if __name__ == "__main__":
    main()
