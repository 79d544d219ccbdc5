"""Memory search: any text is a valid query; ranking, snippets and filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hermes.errors import InvalidInput
from hermes.messages import Message
from hermes.store import SessionRecord
from hermes.store.search import MARK_END, MARK_START, build_match_query


@pytest.fixture
def filled(store):
    nginx = store.create_session(title="Reverse proxy")
    store.add_message(
        nginx.id, Message("user", "I fixed the nginx config: proxy_pass needed a trailing slash.")
    )
    store.add_message(
        nginx.id, Message("assistant", "Great, the upstream now gets the right path.")
    )
    store.add_message(
        nginx.id,
        Message(
            "tool",
            "nginx: configuration file nginx.conf test is successful",
            tool_call_id="c",
            tool_name="run_bash",
        ),
    )
    cooking = store.create_session(title="Dinner")
    store.add_message(
        cooking.id, Message("user", "What should I cook with chicken and rice tonight?")
    )
    store.add_message(
        cooking.id,
        Message("assistant", "Try a chicken biryani.", context="SECRETCONTEXTWORD nginx"),
    )
    return nginx, cooking


HOSTILE = [
    "",
    "   ",
    '"',
    '"""',
    "*",
    "-",
    "nginx*",
    "-nginx",
    "NEAR(nginx config)",
    "nginx AND",
    "AND OR NOT",
    "(",
    ")",
    "config)",
    "{col}: nginx",
    "body: nginx",
    "tool_output:nginx",
    "nginx^",
    "'; DROP TABLE messages; --",
    "\x00nginx",
    "😀 émoji ñ 中文",
    "a" * 5000,
    " ".join(["word"] * 500),
    "%_\\",
    "nginx\nconfig\t",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_any_text_is_a_valid_query(filled, store, query):
    hits = store.search(query)
    assert isinstance(hits, list)


def test_fts_operators_lose_their_power(filled, store):
    # As syntax, "nginx NOT config" would drop the nginx message; as words it must find it.
    assert any("nginx" in h.snippet for h in store.search("nginx NOT config"))
    assert store.search("-nginx")  # not a column filter or an error


def test_empty_query_gives_no_results(filled, store):
    assert store.search("") == []
    assert store.search("?!.") == []


def test_plain_sentence_with_stemming(filled, store):
    hits = store.search("when did I fix the nginx configuration?")
    assert hits[0].role == "user"
    assert "fixed" in hits[0].snippet and MARK_START in hits[0].snippet
    assert hits[0].session_title == "Reverse proxy"


def test_conversation_text_ranks_above_tool_output(store):
    session = store.create_session()
    tool = store.add_message(
        session.id,
        Message("tool", "kubernetes pod restarted", tool_call_id="x", tool_name="run_bash"),
    )
    said = store.add_message(session.id, Message("user", "kubernetes pod restarted"))
    ids = [h.message_id for h in store.search("kubernetes pod restarted")]
    assert ids.index(said.id) < ids.index(tool.id)


def test_phrases_stay_phrases(store):
    session = store.create_session()
    together = store.add_message(session.id, Message("user", "the blue whale is huge"))
    apart = store.add_message(session.id, Message("user", "whale watching; the sky was blue"))
    ids = [h.message_id for h in store.search('"blue whale"')]
    assert together.id in ids and apart.id not in ids


def test_snippet_marks_terms(filled, store):
    hit = store.search("biryani")[0]
    assert f"{MARK_START}biryani{MARK_END}" in hit.snippet


def test_context_is_never_indexed(filled, store):
    assert store.search("SECRETCONTEXTWORD") == []


def test_summaries_and_titles_are_searchable(filled, store):
    nginx, _ = filled
    store.update_session(nginx.id, summary="I helped the user migrate their homelab to Proxmox.")
    hits = store.search("proxmox homelab")
    assert hits[0].role == "summary" and hits[0].message_id is None
    assert hits[0].session_id == nginx.id
    assert hits[0].to_dict().keys() == {
        "session_id",
        "session_title",
        "message_id",
        "role",
        "snippet",
        "created_at",
        "score",
    }
    store.update_session(nginx.id, summary="Something else entirely.")
    assert store.search("proxmox") == []


def test_filters(filled, store):
    nginx, cooking = filled
    assert {h.session_id for h in store.search("nginx chicken", session_id=cooking.id)} == {
        cooking.id
    }
    assert {h.role for h in store.search("nginx", role="tool")} == {"tool"}
    assert all(h.role == "user" for h in store.search("nginx chicken", role="user"))
    with pytest.raises(InvalidInput):
        store.search("nginx", role="system")


def test_date_filters(store):
    old = datetime(2023, 5, 1, tzinfo=UTC)
    new = datetime(2024, 5, 1, tzinfo=UTC)
    for when in (old, new):
        store.add_session_record(
            SessionRecord(
                title=None,
                created_at=when,
                updated_at=when,
                messages=[(Message("user", "deploy day"), when)],
            )
        )
    assert len(store.search("deploy")) == 2
    [hit] = store.search("deploy", since=new - timedelta(days=1))
    assert hit.created_at == new
    [hit] = store.search("deploy", until=new - timedelta(days=1))
    assert hit.created_at == old


def test_deleted_sessions_leave_the_index(filled, store):
    nginx, _ = filled
    store.update_session(nginx.id, summary="nginx notes")
    store.delete_session(nginx.id)
    assert store.search("nginx") == []


def test_limit_is_respected(store):
    session = store.create_session()
    for n in range(30):
        store.add_message(session.id, Message("user", f"lorem ipsum {n}"))
    assert len(store.search("lorem", limit=7)) == 7
    assert len(store.search("lorem", limit=0)) == 1  # clamped, never an error


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("when did I fix the nginx config?", '"fix" OR "nginx" OR "config"'),
        ('"trailing slash" nginx', '"trailing slash" OR "nginx"'),
        ("who are you", '"who" OR "are" OR "you"'),  # all stop words: keep them
        ("AND NEAR(a b)", '"near"'),
        ("", None),
        ("***", None),
        ('say "hi"', '"hi"'),
    ],
)
def test_build_match_query(query, expected):
    assert build_match_query(query) == expected


def test_common_words_are_bounded_but_still_count(store, monkeypatch):
    """With tiny thresholds, the common-word path is exercised on a small database."""
    from hermes.store import search as search_module

    monkeypatch.setattr(search_module, "COMMON_MATCHES", 3)
    monkeypatch.setattr(search_module, "RECENT_WINDOW", 4)
    session = store.create_session()
    filler = [store.add_message(session.id, Message("user", f"server note {n}")) for n in range(8)]
    both = store.add_message(session.id, Message("user", "the server crashed with a segfault"))
    rare_only = store.add_message(session.id, Message("user", "a segfault again"))
    # "server" is common here, "segfault" rare: the message with both wins.
    ids = [h.message_id for h in store.search("server segfault")]
    assert ids[:2] == [both.id, rare_only.id]
    # Only common words: ranked among the newest messages.
    recent = {h.message_id for h in store.search("server note")}
    assert recent and recent <= {m.id for m in filler[-4:]} | {both.id, rare_only.id}


def test_a_session_without_summary_is_not_listed_twice(store):
    session = store.create_session(title="tune the postgres vacuum settings")
    store.add_message(session.id, Message("user", "tune the postgres vacuum settings"))
    hits = store.search("postgres vacuum")
    assert [(h.role, h.session_id) for h in hits] == [("user", session.id)]


def test_the_session_filter_holds_when_sessions_interleave(store):
    # Two conversations written at the same time (a web tab and the CLI):
    # their message ids alternate, so one session's id band holds the other's.
    first = store.create_session(title="one")
    second = store.create_session(title="two")
    for n in range(6):
        store.add_message(first.id, Message("user", f"deploy the gateway, step {n}"))
        store.add_message(second.id, Message("user", f"deploy the gateway, attempt {n}"))
    hits = store.search("deploy gateway", session_id=first.id, limit=50)
    assert len(hits) == 6
    assert {hit.session_id for hit in hits} == {first.id}
    assert all("step" in hit.snippet for hit in hits)
