"""Generate the harder recall set: tests/data/recall_eval.json (memory) and
tests/data/skill_eval.json (skills). Deterministic: same output every run.

Memory: a few long "lives" (multi-session conversations spread over months),
each session mixing planted evidence with distractor turns that reuse the
evidence's vocabulary and with ordinary filler. Question types:

- ``paraphrase``: the answer shares few words with the question.
- ``multi_hop``: the answer needs two or three messages, often in different sessions.
- ``temporal``: "when did ..." (the evidence is the message that says it happened)
  and "what did I ... in <month>" (the session date matters).
- ``context``: the message alone is a short reply ("Yes, let's do that") whose
  meaning sits in the turn before it.
- ``adversarial``: the question's premise is wrong (it names the wrong person);
  the evidence is what was really said.
- ``open_domain``: the answer must be inferred from what the user said about
  themselves ("would I enjoy a busy beach?" against "crowds make me anxious").
- ``single_hop``: plain questions, for comparison.

The ``{month}`` of a "what did we talk about in <month>" question is the month
its evidence was said in (it used to be a fixed "March" that no evidence matched).

Skills: 210 similar-sounding skills and 42 tasks phrased the way people ask.

    python bench/make_recall_eval.py        # writes both files
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# ---- memory ------------------------------------------------------------------
# Each fact: (type, question, [(session title, [(role, text, is_evidence), ...]), ...])
# Sessions of one fact are placed far apart in the same life.
E, N = True, False

FACTS = [
    (
        "paraphrase",
        "what is my dog called?",
        [
            (
                "New family member",
                [
                    ("user", "We adopted a beagle puppy from the shelter on Saturday.", N),
                    ("assistant", "Congratulations! Beagles are curious and food-driven.", N),
                    ("user", "The kids voted and we went with Biscuit.", E),
                    ("assistant", "Biscuit is a lovely choice for a beagle.", N),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "how much do I pay for housing each month?",
        [
            (
                "Apartment search",
                [
                    ("user", "Signed the lease for the flat on Elm Street, 1,450 a month.", E),
                    ("assistant", "Nice, make sure the deposit terms are in writing.", N),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "which medication am I allergic to?",
        [
            (
                "Doctor visit",
                [
                    ("user", "The rash last spring turned out to be a reaction to amoxicillin.", E),
                    (
                        "assistant",
                        "Good to know; tell every new doctor and pharmacist about it.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "what instrument am I learning?",
        [
            (
                "Hobbies",
                [
                    ("user", "Had my third cello lesson, my bow arm is finally relaxing.", E),
                    (
                        "assistant",
                        "Relaxed bowing is most of the battle. Keep practising open strings.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "where did we go on honeymoon?",
        [
            (
                "Anniversary ideas",
                [
                    (
                        "user",
                        "Ten years ago we spent two weeks in Kyoto right after the wedding.",
                        E,
                    ),
                    (
                        "assistant",
                        "Kyoto in autumn is unforgettable. Maybe revisit for the anniversary?",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "why did the production outage happen last night?",
        [
            (
                "Incident",
                [
                    (
                        "user",
                        "The site went down at 2am: the disk on db-1 filled up with WAL files because archiving was broken.",
                        E,
                    ),
                    ("assistant", "Fix archive_command first, then prune the old segments.", N),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "what career change am I considering?",
        [
            (
                "Thinking out loud",
                [
                    ("user", "I keep thinking about leaving accounting to train as a nurse.", E),
                    (
                        "assistant",
                        "Many people switch into nursing mid-career; accelerated programmes exist.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "what diet am I following?",
        [
            (
                "Meal planning",
                [
                    (
                        "user",
                        "Since January I don't eat meat or fish anymore, just eggs and dairy.",
                        E,
                    ),
                    (
                        "assistant",
                        "A lacto-ovo vegetarian plan is easy to balance with legumes.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "which laptop did I end up buying?",
        [
            (
                "Shopping",
                [
                    (
                        "user",
                        "Went with the ThinkPad X1 Carbon in the end, the keyboard won me over.",
                        E,
                    ),
                    (
                        "assistant",
                        "Great keyboard indeed; check the BIOS for the battery charge limit.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "what scares my son at night?",
        [
            (
                "Parenting",
                [
                    (
                        "user",
                        "Leo won't sleep unless the hallway light stays on, he's terrified of the dark.",
                        E,
                    ),
                    ("assistant", "A dim night light is a gentle compromise for many kids.", N),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "how do I get to work?",
        [
            (
                "Commute",
                [
                    (
                        "user",
                        "I cycle to the office along the canal, about 25 minutes each way.",
                        E,
                    ),
                    ("assistant", "A canal route sounds pleasant; get good lights for winter.", N),
                ],
            )
        ],
    ),
    (
        "paraphrase",
        "what was wrong with the car?",
        [
            (
                "Garage",
                [
                    (
                        "user",
                        "The mechanic found the alternator was dying, that's why the battery kept going flat.",
                        E,
                    ),
                    (
                        "assistant",
                        "That explains the repeated dead battery. Replace both if the battery is old.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "multi_hop",
        "in which city will I give my conference talk?",
        [
            (
                "Good news",
                [
                    ("user", "My talk on query planners got accepted at PGConf!", E),
                    ("assistant", "Congratulations, that's a competitive conference.", N),
                ],
            ),
            (
                "Travel",
                [
                    (
                        "user",
                        "PGConf this year is in Lisbon, I need to book a hotel near the venue.",
                        E,
                    ),
                    ("assistant", "The Parque das Nações area is close to most venues.", N),
                ],
            ),
        ],
    ),
    (
        "multi_hop",
        "how old will my sister be at her next birthday?",
        [
            (
                "Family",
                [
                    ("user", "My sister Ana was born in 1990.", E),
                    ("assistant", "Noted.", N),
                ],
            ),
            (
                "Gift ideas",
                [
                    ("user", "Ana's birthday is coming up on the 9th of June, any gift ideas?", E),
                    (
                        "assistant",
                        "An experience gift, like a cooking class, is often remembered longest.",
                        N,
                    ),
                ],
            ),
        ],
    ),
    (
        "multi_hop",
        "which of the services we migrated is still failing?",
        [
            (
                "Migration plan",
                [
                    (
                        "user",
                        "We moved billing, search and notifications to the new cluster this week.",
                        E,
                    ),
                    ("assistant", "Keep the old deployments around for a quick rollback.", N),
                ],
            ),
            (
                "Post-migration",
                [
                    (
                        "user",
                        "Billing and search are healthy; notifications keeps crashing with a TLS handshake error.",
                        E,
                    ),
                    (
                        "assistant",
                        "Check that the new cluster trusts the mail provider's CA bundle.",
                        N,
                    ),
                ],
            ),
        ],
    ),
    (
        "multi_hop",
        "what is the name of the friend who is allergic to peanuts and what is she bringing to the party?",
        [
            (
                "Party planning",
                [
                    ("user", "Priya can't have peanuts, so no satay this time.", E),
                    ("assistant", "I'll suggest a peanut-free menu.", N),
                ],
            ),
            (
                "Party planning, part 2",
                [
                    ("user", "Priya offered to bring her famous mango lassi.", E),
                    ("assistant", "Perfect for a summer party.", N),
                ],
            ),
        ],
    ),
    (
        "multi_hop",
        "who is my manager now and when did they join?",
        [
            (
                "Reorg",
                [
                    ("user", "After the reorg I report to Daniel instead of Martha.", E),
                    ("assistant", "Reorgs can be unsettling; set up a one-on-one early.", N),
                ],
            ),
            (
                "Work",
                [
                    ("user", "Daniel only joined the company in February, coming from Shopify.", E),
                    ("assistant", "Someone new may welcome your context on the team's history.", N),
                ],
            ),
        ],
    ),
    (
        "multi_hop",
        "what breed is the dog my parents got and what did they name it?",
        [
            (
                "Parents",
                [
                    ("user", "Mum and dad finally got a dog, a border collie.", E),
                    ("assistant", "Collies need a lot of exercise and puzzles.", N),
                ],
            ),
            (
                "Weekend",
                [
                    (
                        "user",
                        "Visited my parents, their puppy Pepper already knows sit and stay.",
                        E,
                    ),
                    ("assistant", "Quick learner, as collies are.", N),
                ],
            ),
        ],
    ),
    (
        "multi_hop",
        "which database did we choose and why?",
        [
            (
                "Architecture",
                [
                    (
                        "user",
                        "We need full text search, JSON columns and it must run on a single small VM.",
                        E,
                    ),
                    (
                        "assistant",
                        "Postgres covers all three: tsvector, jsonb, and it's fine on a small VM.",
                        E,
                    ),
                    ("user", "Decision made: Postgres it is.", E),
                ],
            )
        ],
    ),
    (
        "temporal",
        "when did I start my new job?",
        [
            (
                "First day",
                [
                    (
                        "user",
                        "Today was my first day at Helix Robotics, the onboarding was chaotic but fun.",
                        E,
                    ),
                    ("assistant", "Chaotic onboarding is normal at a startup. How's the team?", N),
                ],
            )
        ],
    ),
    (
        "temporal",
        "when did we move house?",
        [
            (
                "Moving day",
                [
                    ("user", "The movers came this morning, we're finally in the new place.", E),
                    (
                        "assistant",
                        "Unpack the kitchen and beds first, everything else can wait.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "temporal",
        "when did I run the marathon?",
        [
            (
                "Race report",
                [
                    ("user", "Finished the Berlin marathon today in 3:58, my legs are jelly.", E),
                    ("assistant", "Sub-four in Berlin, fantastic! Rest and eat well.", N),
                ],
            )
        ],
    ),
    (
        "temporal",
        "when did I get the flu shot?",
        [
            (
                "Health",
                [
                    (
                        "user",
                        "Got my flu vaccine at the pharmacy this afternoon, arm is a bit sore.",
                        E,
                    ),
                    ("assistant", "A sore arm for a day or two is common.", N),
                ],
            )
        ],
    ),
    (
        "temporal",
        "what did we talk about in {month} about the garden?",
        [
            (
                "Spring garden",
                [
                    ("user", "Planning to put tomatoes and basil in the raised bed this year.", E),
                    (
                        "assistant",
                        "Plant basil next to the tomatoes; they like the same sun and water.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "temporal",
        "when did the kitchen renovation finish?",
        [
            (
                "Renovation",
                [
                    (
                        "user",
                        "The builders handed over the new kitchen today, it looks amazing.",
                        E,
                    ),
                    ("assistant", "Congratulations! Keep the warranty papers somewhere safe.", N),
                ],
            )
        ],
    ),
    (
        "temporal",
        "when did I last see the dentist?",
        [
            (
                "Errands",
                [
                    ("user", "Had my dental check-up this morning, no cavities.", E),
                    ("assistant", "Great news. Next check-up in six months.", N),
                ],
            )
        ],
    ),
    (
        "temporal",
        "when did we adopt the cat?",
        [
            (
                "Kitten",
                [
                    ("user", "We brought the kitten home today, she's hiding under the sofa.", E),
                    ("assistant", "Give her a quiet room and time; she'll come out when ready.", N),
                ],
            )
        ],
    ),
    (
        "context",
        "what name did we pick for the new project?",
        [
            (
                "Naming",
                [
                    (
                        "user",
                        "I need a name for the home-automation side project, something short.",
                        N,
                    ),
                    ("assistant", "How about Lantern? Short, friendly and easy to type.", E),
                    ("user", "Love it, going with that.", E),
                ],
            )
        ],
    ),
    (
        "context",
        "did I accept the job offer from Northwind?",
        [
            (
                "Offer",
                [
                    ("assistant", "So, what did you decide about the Northwind offer?", E),
                    ("user", "I turned it down, the commute would have been two hours.", E),
                ],
            )
        ],
    ),
    (
        "context",
        "which hosting provider did I decide on for the blog?",
        [
            (
                "Blog setup",
                [
                    ("user", "Netlify or a small Hetzner VPS for the blog?", E),
                    (
                        "assistant",
                        "For a static blog Netlify is zero maintenance; a VPS gives more control.",
                        N,
                    ),
                    ("user", "Zero maintenance wins, the first one.", E),
                ],
            )
        ],
    ),
    (
        "context",
        "what did the vet say about the dog's limp?",
        [
            (
                "Vet",
                [
                    ("user", "Back from the vet with Biscuit's limp.", E),
                    ("assistant", "What was the verdict?", N),
                    ("user", "Just a sprain, two weeks of short walks and no jumping.", E),
                ],
            )
        ],
    ),
    (
        "context",
        "should I refinance the mortgage, what did we conclude?",
        [
            (
                "Money",
                [
                    ("user", "Is refinancing worth it with the fees at 3,000?", E),
                    (
                        "assistant",
                        "At your balance the lower rate saves about 180 a month, so you break even in under two years. Worth it.",
                        E,
                    ),
                ],
            )
        ],
    ),
    (
        "single_hop",
        "what is my wifi password hint?",
        [
            (
                "Home network",
                [
                    (
                        "user",
                        "Note to self: the wifi password hint is the name of our first street.",
                        E,
                    ),
                    ("assistant", "Noted.", N),
                ],
            )
        ],
    ),
    (
        "single_hop",
        "what port does the staging server listen on?",
        [
            (
                "Staging",
                [
                    ("user", "The staging server listens on port 8443 behind the VPN.", E),
                    ("assistant", "Remember to open 8443 in the security group.", N),
                ],
            )
        ],
    ),
    (
        "single_hop",
        "which book is the book club reading?",
        [
            (
                "Book club",
                [
                    ("user", "The book club picked 'The Left Hand of Darkness' for next month.", E),
                    ("assistant", "A classic; the ice crossing chapters are unforgettable.", N),
                ],
            )
        ],
    ),
    (
        "single_hop",
        "what is the cron schedule for the backup job?",
        [
            (
                "Backups",
                [
                    (
                        "user",
                        "Set the backup cron to 15 3 * * * so it runs after the nightly import.",
                        E,
                    ),
                    ("assistant", "Good; 03:15 leaves room after the import.", N),
                ],
            )
        ],
    ),
    (
        "adversarial",
        "what did my husband give me for my birthday?",
        [
            (
                "Birthday",
                [
                    (
                        "user",
                        "My sister surprised me with a pottery class voucher for my birthday.",
                        E,
                    ),
                    ("assistant", "What a thoughtful present! Pottery is very relaxing.", N),
                ],
            )
        ],
    ),
    (
        "adversarial",
        "which city is my boss moving to?",
        [
            (
                "News",
                [
                    ("user", "My best friend Tom is relocating to Rotterdam for a new job.", E),
                    ("assistant", "Rotterdam is a great city; you'll have a reason to visit.", N),
                ],
            )
        ],
    ),
    (
        "adversarial",
        "why did my daughter stop swimming lessons?",
        [
            (
                "Family news",
                [
                    (
                        "user",
                        "My nephew quit the swimming lessons, the chlorine made his eyes sting.",
                        E,
                    ),
                    ("assistant", "Well-fitting goggles usually fix that.", N),
                ],
            )
        ],
    ),
    (
        "open_domain",
        "would I enjoy a week at a busy beach resort?",
        [
            (
                "Holiday ideas",
                [
                    ("user", "Crowds make me anxious, I'd much rather hike somewhere quiet.", E),
                    (
                        "assistant",
                        "Then a mountain hut or a quiet coastal trail would suit you.",
                        N,
                    ),
                ],
            )
        ],
    ),
    (
        "open_domain",
        "what would be a good present for my mum?",
        [
            (
                "Mum",
                [
                    ("user", "Mum spends every weekend in her greenhouse fussing over orchids.", E),
                    ("assistant", "Sounds like a very happy hobby.", N),
                ],
            )
        ],
    ),
    (
        "open_domain",
        "should I take a job that needs a lot of flying?",
        [
            (
                "Health",
                [
                    ("user", "I get terribly airsick, even a one-hour hop ruins my day.", E),
                    ("assistant", "Sitting over the wing and looking at the horizon can help.", N),
                ],
            )
        ],
    ),
]

# Distractors: realistic turns that share the facts' words but answer nothing.
DISTRACTORS = [
    "The puppy class at the shelter is on Saturdays, I might volunteer.",
    "Biscuit recipes with less sugar, any ideas? Something for the kids.",
    "Our neighbour's dog barks all night, it's driving me crazy.",
    "Is 1,450 a reasonable price for a used road bike?",
    "Read an article about the lease vs buy debate for cars.",
    "The pharmacy was out of the allergy spray again.",
    "My friend is learning the violin, she says it's harder than piano.",
    "Kyoto has so many temples, which ones are worth it on a short trip?",
    "The disk on my laptop is almost full, what can I delete safely?",
    "Our accounting software update broke the invoice export.",
    "Nurses at the clinic were so kind during dad's check-up.",
    "Dairy makes me bloated sometimes, should I worry?",
    "The ThinkPad at work has a broken trackpoint.",
    "Leo's school play is next week, he's a tree.",
    "The canal path was flooded this morning.",
    "Battery of my phone drains fast since the update.",
    "Conference wifi was terrible, the talk demos kept failing.",
    "My sister sent photos from her trip to Lisbon.",
    "Notifications on my phone are too noisy, how do I batch them?",
    "We're out of mango, I'll pick some up.",
    "The party next door went on until 3am.",
    "My manager asked for the quarterly report by Friday.",
    "Which dog breeds are good with small apartments?",
    "How do I back up a Postgres database to S3?",
    "Started reading a book about the history of robotics.",
    "Moving the meeting to Thursday, the room is booked.",
    "Watched the marathon on TV, the winner was incredible.",
    "The vaccine appointment system crashed again.",
    "Garden centre has a sale on tomato feed.",
    "Kitchen scale broke, need a new one for baking.",
    "Dentist's office called about an unpaid bill, I think it's a mistake.",
    "The cat from next door keeps sitting in our garden.",
    "Brainstorming names for the team's wiki, nothing good yet.",
    "Job boards are full of the same recycled offers.",
    "Netlify build minutes ran out on the work account.",
    "The vet's waiting room was packed today.",
    "Mortgage rates were in the news again.",
    "Changed the router admin password, it was still the default.",
    "The staging database is slow again today.",
    "Book club snacks are my turn this month.",
    "The cron job for log rotation keeps emailing me.",
    "Is it normal for a cello to need new strings every year?",
    "The first day of spring and it's snowing.",
    "Movers quoted way too much for a one-bedroom.",
    "Had a sore throat this morning, probably the air conditioning.",
    "The beach bar near the office gets busy at lunch.",
    "Pool opening hours changed again, the swimming club is annoyed.",
    "Tom's band is playing at the pub on Friday.",
    "Greenhouse gas figures were all over the news today.",
    "Flight prices to Rome went up again, maybe we take the train.",
    "Her birthday cake collapsed in the oven, we laughed a lot.",
    "My boss wants the slides by Monday morning.",
]

FILLER = [
    ("user", "Can you help me write a polite reminder email to a client who hasn't paid?"),
    (
        "assistant",
        "Sure. Keep it short, mention the invoice number and the due date, and offer help if something is unclear.",
    ),
    ("user", "What's a quick dinner with rice and whatever vegetables I have?"),
    (
        "assistant",
        "Fried rice: day-old rice, vegetables, an egg, soy sauce and a little sesame oil.",
    ),
    ("user", "Explain the difference between a process and a thread in simple terms."),
    (
        "assistant",
        "A process has its own memory; threads share the memory of the process they live in.",
    ),
    ("user", "How do I undo the last git commit but keep the changes?"),
    ("assistant", "git reset --soft HEAD~1 keeps the changes staged."),
    ("user", "Recommend a podcast for a long drive."),
    ("assistant", "Try a narrative history show; long episodes suit a drive."),
    ("user", "Convert 72 Fahrenheit to Celsius."),
    ("assistant", "72°F is about 22°C."),
    ("user", "What's a good stretch for a stiff lower back?"),
    ("assistant", "Knee-to-chest and cat-cow stretches, slowly, a few times a day."),
    ("user", "Summarize the plot of Hamlet in two sentences."),
    (
        "assistant",
        "A prince seeks revenge for his father's murder by his uncle. Nearly everyone dies.",
    ),
    ("tool", "$ df -h\nFilesystem Size Used Avail Use% Mounted on\n/dev/sda1 100G 71G 29G 71% /"),
    ("user", "Write a regex that matches an email address, roughly."),
    ("assistant", "Something like [^@\\s]+@[^@\\s]+\\.[^@\\s]+ is good enough for a sanity check."),
]

LIVES = 6
SESSIONS_PER_LIFE = 30
SESSION_DISTRACTORS = 3
SESSION_FILLER = 6


def build_memory(seed: int = 15) -> dict:
    """Sessions (with dates) and labelled questions, reproducibly."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 8, 18, 0, tzinfo=UTC)
    sessions: list[dict] = []
    questions: list[dict] = []
    # A life is one user's memory (its own database in the bench). Each life holds
    # a random half of the facts at random places among its sessions.
    for life in range(LIVES):
        placed: list[tuple[int, int, list]] = []  # (fact index, slot, session spec)
        facts = list(range(len(FACTS)))
        rng.shuffle(facts)
        chosen = facts[: len(FACTS) // 2 + life % 2 * 3]
        free = list(range(SESSIONS_PER_LIFE))
        rng.shuffle(free)
        extra_sessions: list[tuple[int, int, tuple]] = []
        for fact_index in chosen:
            for part_number, part in enumerate(FACTS[fact_index][2]):
                extra_sessions.append((fact_index, part_number, part))
        # One fact session per slot where possible; the rest are appended.
        for n, item in enumerate(extra_sessions):
            slot = free[n] if n < len(free) else SESSIONS_PER_LIFE + n
            placed.append((slot, item))
        placed.sort(key=lambda p: p[0])
        by_slot = {slot: item for slot, item in placed}
        total_slots = max([SESSIONS_PER_LIFE - 1, *by_slot]) + 1
        evidence: dict[int, list] = {}
        for slot in range(total_slots):
            when = start + timedelta(days=slot * 9 + life, hours=rng.randint(0, 4))
            key = f"L{life}S{slot}"
            messages: list[dict] = []
            filler_at = rng.sample(range(0, len(FILLER) - 1, 2), SESSION_FILLER // 2)
            for at in filler_at:
                messages.append({"role": FILLER[at][0], "content": FILLER[at][1]})
                messages.append({"role": FILLER[at + 1][0], "content": FILLER[at + 1][1]})
            for text in rng.sample(DISTRACTORS, SESSION_DISTRACTORS):
                insert_at = rng.randint(0, len(messages))
                messages.insert(insert_at, {"role": "user", "content": text})
                messages.insert(
                    insert_at + 1,
                    {
                        "role": "assistant",
                        "content": "I see. Tell me more if you'd like help with it.",
                    },
                )
            title = rng.choice(["Chat", "Quick questions", "Evening chat", "Misc"])
            item = by_slot.get(slot)
            if item is not None:
                fact_index, part_number, (title, turns) = item
                insert_at = rng.randint(0, len(messages) // 2) & ~1
                for offset, (role, content, is_evidence) in enumerate(turns):
                    messages.insert(insert_at + offset, {"role": role, "content": content})
                    if is_evidence:
                        evidence.setdefault(fact_index, []).append([key, insert_at + offset])
            sessions.append(
                {
                    "key": key,
                    "life": life,
                    "title": title,
                    "created_at": when.isoformat(),
                    "messages": messages,
                }
            )
        for fact_index in chosen:
            kind, question, _ = FACTS[fact_index]
            if "{month}" in question:
                # The month the evidence was said in (the first evidence session's).
                first = next(s for s in sessions if s["key"] == evidence[fact_index][0][0])
                month = datetime.fromisoformat(first["created_at"]).strftime("%B")
                question = question.replace("{month}", month)
            questions.append(
                {"life": life, "type": kind, "question": question, "evidence": evidence[fact_index]}
            )
    return {"sessions": sessions, "questions": questions}


# ---- skills ------------------------------------------------------------------
# (name, description, triggers, a task phrased the way a person asks)
TARGET_SKILLS = [
    (
        "rotate-leaked-credentials",
        "Revoke and reissue API keys, tokens or passwords after they were exposed, then check logs for misuse.",
        ["leaked secret", "rotate keys"],
        "I accidentally pasted our API token in a public chat, what now?",
    ),
    (
        "renew-tls-certificates",
        "Renew TLS certificates with certbot before they expire and reload the web server.",
        ["certificate expiry", "certbot"],
        "browsers say the site is not secure since this morning, the padlock is gone",
    ),
    (
        "restore-database-backup",
        "Restore a Postgres database from the nightly dump into a fresh instance and verify row counts.",
        ["pg_restore", "restore backup"],
        "someone dropped the customers table by mistake, how do we get it back?",
    ),
    (
        "free-disk-space",
        "Find what fills a Linux disk (du, journal, docker images) and clean it up safely.",
        ["disk full", "no space left"],
        "the server says there's no room left to write files",
    ),
    (
        "debug-memory-leak",
        "Track down a growing memory footprint in a Python service with tracemalloc and heap snapshots.",
        ["memory leak", "tracemalloc"],
        "our worker's RAM keeps climbing until the container gets killed",
    ),
    (
        "fix-merge-conflict",
        "Resolve git merge conflicts: inspect both sides, edit, mark resolved and continue the merge or rebase.",
        ["merge conflict", "rebase conflict"],
        "git says both modified and won't let me finish pulling",
    ),
    (
        "undo-git-push",
        "Revert or reset a commit that was already pushed, without breaking teammates' clones.",
        ["revert pushed commit"],
        "I pushed something to main that I shouldn't have, how do I take it back?",
    ),
    (
        "speed-up-slow-query",
        "Diagnose a slow SQL query with EXPLAIN ANALYZE and add the right index.",
        ["slow query", "explain analyze"],
        "the reports page takes 30 seconds to load, the database seems to be the bottleneck",
    ),
    (
        "set-up-ssh-keys",
        "Generate an ed25519 SSH key pair, install the public key on a server and disable password login.",
        ["ssh key", "passwordless login"],
        "I'm tired of typing my password every time I log into the box",
    ),
    (
        "write-cover-letter",
        "Draft a tailored cover letter from a job ad and a CV, one page, concrete achievements.",
        ["cover letter", "job application"],
        "help me apply for this position, they want a letter with my CV",
    ),
    (
        "plan-weekly-meals",
        "Plan a week of dinners with a shopping list, using what is already in the fridge.",
        ["meal plan", "grocery list"],
        "I never know what to cook, can you organize my dinners for the next seven days?",
    ),
    (
        "negotiate-salary",
        "Prepare for a salary negotiation: market range, anchor, and answers to common pushbacks.",
        ["raise", "salary negotiation"],
        "my review is next week and I want to ask for more money",
    ),
    (
        "prepare-tax-return",
        "Gather documents and fill in a personal income tax return, with deductions to check.",
        ["tax return", "deductions"],
        "the deadline for filing with the revenue office is coming up, where do I start?",
    ),
    (
        "book-travel-itinerary",
        "Build a day-by-day travel itinerary with transport, bookings and opening hours.",
        ["itinerary", "trip plan"],
        "we have five days in Rome in April, organize them for us",
    ),
    (
        "train-for-5k",
        "A beginner's plan to go from walking to running 5 km in eight weeks.",
        ["couch to 5k", "running plan"],
        "I can barely jog for two minutes but want to do a park run by summer",
    ),
    (
        "fix-wifi-drops",
        "Diagnose a Wi-Fi connection that keeps dropping: channels, interference, router firmware.",
        ["wifi drops", "wireless disconnects"],
        "the internet at home cuts out every evening for a few minutes",
    ),
    (
        "configure-nginx-reverse-proxy",
        "Put nginx in front of an app server as a reverse proxy with headers and timeouts.",
        ["reverse proxy", "proxy_pass"],
        "I want my flask app reachable on port 80 through the web server in front of it",
    ),
    (
        "dockerize-python-app",
        "Write a small, cached Dockerfile for a Python app and run it with compose.",
        ["dockerfile", "containerize"],
        "how do I put my python service in a container so it runs the same everywhere?",
    ),
    (
        "set-up-ci-pipeline",
        "Create a CI workflow that installs, lints and tests on every push and pull request.",
        ["github actions", "continuous integration"],
        "I want the tests to run automatically whenever someone opens a PR",
    ),
    (
        "write-unit-tests",
        "Write focused pytest tests for a function, with fixtures, edge cases and parametrization.",
        ["pytest", "unit tests"],
        "this parsing function has no coverage at all, can you check it properly?",
    ),
    (
        "profile-cpu-hotspots",
        "Find where a Python program spends its time with cProfile and py-spy, then optimize.",
        ["profiling", "cprofile"],
        "the script takes forever and I have no idea which part is slow",
    ),
    (
        "migrate-database-schema",
        "Write and apply a database migration with Alembic, including a safe downgrade.",
        ["alembic", "schema migration"],
        "I need to add a column to the users table in production without breaking anything",
    ),
    (
        "handle-customer-complaint",
        "Answer an angry customer email: acknowledge, apologize specifically, offer a concrete fix.",
        ["complaint", "angry customer"],
        "a client sent a furious message about a late delivery, how should I reply?",
    ),
    (
        "summarize-meeting-notes",
        "Turn raw meeting notes into decisions, action items with owners, and open questions.",
        ["meeting minutes", "action items"],
        "here's the messy transcript from our call, make it useful for the people who missed it",
    ),
    (
        "create-budget",
        "Set up a monthly budget from bank statements: categories, limits, savings goal.",
        ["budget", "spending plan"],
        "I have no idea where my paycheck goes every month",
    ),
    (
        "learn-language-routine",
        "A daily routine for learning a foreign language: spaced repetition, listening, speaking.",
        ["language learning", "vocabulary"],
        "I'm moving to Spain next year and only know hola",
    ),
    (
        "care-for-houseplants",
        "Diagnose an unhappy houseplant (light, watering, pests) and fix its care routine.",
        ["plant care", "yellow leaves"],
        "the leaves on my monstera are turning brown at the edges",
    ),
    (
        "sleep-better",
        "Improve sleep with a consistent schedule, light, caffeine timing and a wind-down routine.",
        ["insomnia", "sleep hygiene"],
        "I lie awake until 3am most nights and I'm exhausted",
    ),
    (
        "schedule-cron-job",
        "Schedule a recurring task with cron or a systemd timer, with logging and failure mail.",
        ["cron", "systemd timer"],
        "I want a script to run by itself every night at 2",
    ),
    (
        "set-up-monitoring-alerts",
        "Add uptime and error-rate alerts that page the on-call person, with sane thresholds.",
        ["alerting", "uptime monitoring"],
        "last outage nobody noticed for three hours, I want to be woken up next time",
    ),
    (
        "recover-deleted-files",
        "Recover accidentally deleted files from trash, snapshots or with photorec.",
        ["file recovery", "undelete"],
        "I emptied the trash and my thesis folder was in it",
    ),
    (
        "secure-home-router",
        "Harden a home router: admin password, firmware, WPA3, disable WPS and UPnP.",
        ["router security", "wps"],
        "I think someone is using my home network without permission",
    ),
    (
        "write-bash-script",
        "Write a robust bash script with set -euo pipefail, arguments and error messages.",
        ["bash script", "shell script"],
        "I keep typing the same five commands, can we automate them in a file?",
    ),
    (
        "parse-json-logs",
        "Filter and aggregate JSON log lines with jq to answer questions about errors.",
        ["jq", "json logs"],
        "which endpoints threw the most 500s yesterday according to the log files?",
    ),
    (
        "optimize-images-for-web",
        "Resize and compress images (WebP/AVIF) for a faster website.",
        ["image compression", "webp"],
        "my blog pages are heavy because the photos are huge",
    ),
    (
        "prepare-job-interview",
        "Prepare for a job interview: company research, STAR stories, questions to ask.",
        ["interview prep", "behavioral questions"],
        "I have a call with the hiring manager on Thursday and I'm nervous",
    ),
    (
        "organize-moving-house",
        "A checklist for moving home: utilities, address changes, packing order, movers.",
        ["moving checklist", "relocation"],
        "we're changing apartments next month and I'm overwhelmed",
    ),
    (
        "plan-kids-birthday-party",
        "Plan a children's birthday party: guest list, games, food, budget and timeline.",
        ["birthday party", "kids party"],
        "my son turns six soon and wants his whole class over",
    ),
    (
        "deal-with-burnout",
        "Recognize burnout and make a recovery plan: workload talk, boundaries, rest.",
        ["burnout", "exhaustion"],
        "I dread opening my laptop every morning and feel empty",
    ),
    (
        "write-release-notes",
        "Write user-facing release notes from a list of merged changes.",
        ["changelog", "release notes"],
        "we ship version 2.3 tomorrow, tell users what changed in plain words",
    ),
    (
        "clean-up-python-dependencies",
        "Find unused and outdated Python dependencies and pin the rest.",
        ["requirements", "dependency audit"],
        "our requirements file has grown to 120 lines and half of it is probably unused",
    ),
    (
        "explain-error-message",
        "Read a stack trace, find the failing line and explain the likely cause.",
        ["traceback", "stack trace"],
        "what does this KeyError wall of red text even mean?",
    ),
]

TOPICS = [
    "api keys",
    "tls certificates",
    "ssh keys",
    "database backups",
    "docker images",
    "git branches",
    "nginx logs",
    "python packages",
    "cron jobs",
    "dns records",
    "s3 buckets",
    "kubernetes pods",
    "user accounts",
    "invoices",
    "meal prep",
    "running shoes",
    "garden beds",
    "travel bookings",
    "job applications",
    "tax documents",
    "family photos",
    "email inbox",
    "wifi router",
    "home budget",
    "sleep tracker",
    "language flashcards",
    "meeting agenda",
    "release branch",
    "test fixtures",
    "error logs",
    "web fonts",
    "grafana dashboards",
    "redis cache",
    "celery queues",
]
VERBS = [
    ("audit", "Audit {t}: list them, flag stale or risky ones and write a short report."),
    ("document", "Document {t} in the team wiki with owners and a how-to."),
    ("migrate", "Migrate {t} to the new setup with a rollback plan."),
    ("monitor", "Monitor {t} and chart their trend over time."),
    ("archive", "Archive old {t} to cheap storage and keep an index."),
    ("tag", "Tag and label {t} consistently so they are easy to filter."),
    ("inventory", "Build an inventory spreadsheet of {t} with dates and costs."),
    ("compare", "Compare options for {t} and recommend one with pros and cons."),
]


def build_skills(seed: int = 15) -> dict:
    """210 skills (42 targets + similar-sounding distractors) and one task per target."""
    rng = random.Random(seed)
    skills = [
        {
            "name": name,
            "description": description,
            "triggers": triggers,
            "body": f"# {name.replace('-', ' ').title()}\n\n1. Understand the situation.\n2. {description}\n3. Verify the result and tell the user what changed.",
        }
        for name, description, triggers, _ in TARGET_SKILLS
    ]
    names = {s["name"] for s in skills}
    combos = [(verb, template, topic) for verb, template in VERBS for topic in TOPICS]
    rng.shuffle(combos)
    for verb, template, topic in combos:
        if len(skills) >= 210:
            break
        name = f"{verb}-{topic.replace(' ', '-')}"
        if name in names:
            continue
        names.add(name)
        description = template.format(t=topic)
        skills.append(
            {
                "name": name,
                "description": description,
                "triggers": [f"{verb} {topic}"],
                "body": f"# {verb.title()} {topic}\n\n{description}\n\nSteps: gather, check, write down, review.",
            }
        )
    tasks = [{"task": task, "skill": name} for name, _, _, task in TARGET_SKILLS]
    return {"skills": skills, "tasks": tasks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    memory = build_memory()
    skills = build_skills()
    (args.out / "recall_eval.json").write_text(
        json.dumps(memory, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (args.out / "skill_eval.json").write_text(
        json.dumps(skills, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    messages = sum(len(s["messages"]) for s in memory["sessions"])
    print(
        f"{len(memory['sessions'])} sessions, {messages} messages, {len(memory['questions'])} questions; "
        f"{len(skills['skills'])} skills, {len(skills['tasks'])} tasks"
    )


if __name__ == "__main__":
    main()
