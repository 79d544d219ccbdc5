"""/api/sessions: list (cursor paged), create, open (paged both ways), rename, delete, export."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hermes.messages import Message
from hermes.store.bulk import SessionRecord

TURN_ID = "a" * 32


def _chat(store, title: str, *texts: str) -> int:
    session_id = store.create_session(title=title, source="web").id
    for i, text in enumerate(texts):
        store.add_message(
            session_id, Message(role="user" if i % 2 == 0 else "assistant", content=text)
        )
    return session_id


def _long_session(store, count: int) -> int:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    messages = [
        (
            Message(role="user" if i % 2 == 0 else "assistant", content=f"message {i}"),
            start + timedelta(seconds=i),
        )
        for i in range(count)
    ]
    record = SessionRecord(
        title="long",
        created_at=start,
        updated_at=start + timedelta(seconds=count),
        messages=messages,
    )
    return store.add_session_record(record)


# ---- list ---------------------------------------------------------------------


def test_list_is_newest_first_and_cursor_paged(api, app_store):
    ids = [_chat(app_store, f"chat {i}", "hello") for i in range(7)]
    first = api.get("/api/sessions?limit=3").json
    assert [s["id"] for s in first["sessions"]] == ids[::-1][:3]
    assert first["next"]
    second = api.get(f"/api/sessions?limit=3&before={first['next']}").json
    third = api.get(f"/api/sessions?limit=3&before={second['next']}").json
    seen = [s["id"] for page in (first, second, third) for s in page["sessions"]]
    assert seen == ids[::-1]
    assert third["next"] is None


def test_list_fields_match_spec_plus_running_turn_and_model(api, app_store):
    session_id = _chat(app_store, "busy", "hi")
    app_store.start_turn(session_id, TURN_ID)
    (session,) = api.get("/api/sessions").json["sessions"]
    for field in ("id", "title", "source", "created_at", "updated_at", "message_count", "summary"):
        assert field in session
    assert session["running_turn_id"] == TURN_ID
    assert "model" in session
    assert session["message_count"] == 1
    assert "messages" not in session


@pytest.mark.parametrize("query", ["limit=0", "limit=abc", "limit=201", "before=not-a-cursor"])
def test_list_refuses_bad_parameters(api, query):
    response = api.get(f"/api/sessions?{query}")
    assert response.status_code == 400
    assert response.json["error"]["message"]


# ---- create ----------------------------------------------------------------------


def test_create_answers_201_with_the_session(api, app_store):
    response = api.post("/api/sessions")
    assert response.status_code == 201
    session = response.json["session"]
    assert session["source"] == "web"
    assert session["running_turn_id"] is None
    assert app_store.get_session(session["id"]).source == "web"


def test_create_takes_an_optional_title(api):
    response = api.post("/api/sessions", json={"title": "  Trip   plans "})
    assert response.json["session"]["title"] == "Trip plans"


@pytest.mark.parametrize(
    "body",
    [{"title": 5}, {"title": ""}, {"title": "x" * 201}, {"nope": 1}, [1, 2], "text"],
)
def test_create_refuses_bad_bodies(api, app_store, body):
    response = api.post("/api/sessions", json=body)
    assert response.status_code == 400
    assert app_store.list_sessions()[0] == []


def test_create_refuses_malformed_json(api, app_store):
    response = api.post("/api/sessions", data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert app_store.list_sessions()[0] == []


# ---- open -------------------------------------------------------------------------


def test_a_long_session_opens_at_its_end_in_one_small_page(api, app_store):
    session_id = _long_session(app_store, 5000)
    response = api.get(f"/api/sessions/{session_id}")
    body = response.json
    assert body["session"]["message_count"] == 5000
    contents = [m["content"] for m in body["messages"]]
    assert contents == [f"message {i}" for i in range(4900, 5000)]
    assert body["has_more"] is True
    assert len(response.data) < 40_000
    for field in ("id", "role", "content", "tool_calls", "tool_call_id", "tool_name", "created_at"):
        assert field in body["messages"][0]


def test_paging_backwards_and_forwards(api, app_store):
    session_id = _long_session(app_store, 25)
    newest = api.get(f"/api/sessions/{session_id}?limit=10").json
    assert [m["content"] for m in newest["messages"]][0] == "message 15"
    oldest_id = newest["messages"][0]["id"]
    older = api.get(f"/api/sessions/{session_id}?limit=10&before={oldest_id}").json
    assert [m["content"] for m in older["messages"]] == [f"message {i}" for i in range(5, 15)]
    assert older["has_more"] is True
    first = api.get(f"/api/sessions/{session_id}?limit=10&before={older['messages'][0]['id']}").json
    assert [m["content"] for m in first["messages"]] == [f"message {i}" for i in range(5)]
    assert first["has_more"] is False
    after = api.get(f"/api/sessions/{session_id}?limit=10&after={first['messages'][-1]['id']}").json
    assert [m["content"] for m in after["messages"]] == [f"message {i}" for i in range(5, 15)]
    assert after["has_more"] is True
    end = api.get(f"/api/sessions/{session_id}?limit=10&after={newest['messages'][-1]['id']}").json
    assert end == {**end, "messages": [], "has_more": False}


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=501", "limit=x", "before=x", "before=1&after=2", "after=-1"]
)
def test_open_refuses_bad_parameters(api, app_store, query):
    session_id = _long_session(app_store, 3)
    assert api.get(f"/api/sessions/{session_id}?{query}").status_code == 400


def test_paging_from_another_sessions_message_is_refused(api, app_store):
    one = _chat(app_store, "one", "a", "b")
    two = _chat(app_store, "two", "c", "d")
    foreign = api.get(f"/api/sessions/{one}").json["messages"][0]["id"]
    response = api.get(f"/api/sessions/{two}?before={foreign}")
    assert response.status_code == 400
    assert response.json["error"]["field"] == "before"


@pytest.mark.parametrize("session_id", ["999", "0", "abc", "99999999999999999999999", "-1"])
def test_unknown_ids_are_404(api, session_id):
    for response in (
        api.get(f"/api/sessions/{session_id}"),
        api.patch(f"/api/sessions/{session_id}", json={"title": "x"}),
        api.delete(f"/api/sessions/{session_id}"),
        api.get(f"/api/sessions/{session_id}/export"),
    ):
        assert response.status_code == 404
        assert response.json["error"]["code"] == "not_found"


# ---- rename -----------------------------------------------------------------------


def test_rename(api, app_store):
    session_id = _chat(app_store, "old", "hi")
    response = api.patch(f"/api/sessions/{session_id}", json={"title": "New name"})
    assert response.status_code == 200
    assert response.json["session"]["title"] == "New name"
    assert app_store.get_session(session_id).title == "New name"


@pytest.mark.parametrize("body", [{}, {"title": None}, {"title": 3}, {"title": " "}, {"x": "y"}])
def test_rename_refuses_bad_bodies(api, app_store, body):
    session_id = _chat(app_store, "old", "hi")
    response = api.patch(f"/api/sessions/{session_id}", json=body)
    assert response.status_code == 400
    assert app_store.get_session(session_id).title == "old"


# ---- delete -----------------------------------------------------------------------


def test_delete_removes_the_session_and_its_messages_from_search(api, app_store):
    session_id = _chat(app_store, "secret plans", "the zanzibar itinerary", "sounds fun")
    keep = _chat(app_store, "other", "zanzibar again")
    hits = api.get("/api/memory/search?q=zanzibar").json["results"]
    assert {hit["session_id"] for hit in hits} == {session_id, keep}
    assert api.delete(f"/api/sessions/{session_id}").status_code == 204
    hits = api.get("/api/memory/search?q=zanzibar").json["results"]
    assert {hit["session_id"] for hit in hits} == {keep}
    # The deleted session's id is gone everywhere.
    assert api.get(f"/api/sessions/{session_id}").status_code == 404
    assert api.patch(f"/api/sessions/{session_id}", json={"title": "x"}).status_code == 404
    assert api.delete(f"/api/sessions/{session_id}").status_code == 404
    assert api.get(f"/api/sessions/{session_id}/export").status_code == 404
    assert api.get(f"/sessions/{session_id}").status_code == 404


def test_a_session_with_a_running_turn_is_not_deleted(api, app_store):
    session_id = _chat(app_store, "busy", "hi")
    app_store.start_turn(session_id, TURN_ID)
    response = api.delete(f"/api/sessions/{session_id}")
    assert response.status_code == 409
    assert response.json["error"] == {**response.json["error"], "turn_id": TURN_ID}
    assert app_store.get_session(session_id).message_count == 1


# ---- export -----------------------------------------------------------------------


def test_export_json_and_markdown(api, app_store):
    session_id = _chat(app_store, "Recipes", "how do I make bread?", "Flour, water, salt.")
    response = api.get(f"/api/sessions/{session_id}/export?format=json")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    data = response.json
    assert data["title"] == "Recipes"
    assert [m["content"] for m in data["messages"]] == [
        "how do I make bread?",
        "Flour, water, salt.",
    ]
    markdown = api.get(f"/api/sessions/{session_id}/export?format=markdown")
    assert markdown.mimetype == "text/markdown"
    assert markdown.text.startswith("# Recipes")
    assert "Flour, water, salt." in markdown.text
    default = api.get(f"/api/sessions/{session_id}/export")
    assert default.json["title"] == "Recipes"


def test_export_refuses_unknown_formats(api, app_store):
    session_id = _chat(app_store, "x", "y")
    response = api.get(f"/api/sessions/{session_id}/export?format=pdf")
    assert response.status_code == 400
    assert response.json["error"]["field"] == "format"


def test_a_form_body_instead_of_json_is_refused(api, app_store):
    session_id = _chat(app_store, "old", "hi")
    response = api.patch(f"/api/sessions/{session_id}", data={"title": "x"})
    assert response.status_code == 400
    assert response.json["error"]["code"] == "invalid_json"
    assert app_store.get_session(session_id).title == "old"


def test_a_session_without_its_own_model_shows_the_configured_one(make_app):
    from tests.web.conftest import ApiClient, log_in

    app = make_app(provider="anthropic", model="claude-test-model", api_key="k")
    browser = app.test_client()
    api = ApiClient(browser, log_in(browser))
    store = app.extensions["hermes.runtime"].store
    store.create_session(title="cli", source="cli")
    store.create_session(title="pinned", source="cli", model="other-model")
    models = {s["title"]: s["model"] for s in api.get("/api/sessions").json["sessions"]}
    assert models == {"cli": "claude-test-model", "pinned": "other-model"}


def test_a_summarized_session_lists_its_compactions_and_usage(api, app_store):
    session = app_store.create_session()
    ids = [
        app_store.add_message(session.id, Message(role=role, content=f"message {n}")).id
        for n, role in enumerate(["user", "assistant"] * 3)
    ]
    # A prune-only compaction (no summary) draws no marker; a summarizing one does.
    app_store.add_compaction(
        session.id, through_message_id=ids[1], pruned_through_id=ids[1], summary=None
    )
    app_store.add_compaction(
        session.id, through_message_id=ids[3], pruned_through_id=ids[3], summary="- asked: x",
        messages_covered=3, tokens_before=900, tokens_after=200,
    )  # fmt: skip
    body = api.get(f"/api/sessions/{session.id}").json
    [marker] = body["session"]["compactions"]
    assert marker["through_message_id"] == ids[3] and marker["messages_covered"] == 3
    assert "summary" not in marker  # the summary is the model's view, not the transcript
    assert set(body["session"]["usage"]) >= {"input_tokens", "output_tokens", "cost_usd"}
    assert [m["id"] for m in body["messages"]] == ids  # every message is still shown
