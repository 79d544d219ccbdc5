"""The turn routes through Flask's test client: every success and every refusal.

Turns are real (the real SDK against the scripted server); the streaming
itself is proven against a real gunicorn in test_gunicorn_turns.py.
"""

from __future__ import annotations

import json

import pytest

from tests.web.conftest import ApiClient, log_in


@pytest.fixture
def turns_app(make_app, fake_llm):
    return make_app(**fake_llm.config_overrides("anthropic"), max_retries=0)


@pytest.fixture
def browser(turns_app) -> ApiClient:
    client = turns_app.test_client()
    return ApiClient(client, log_in(client))


def new_session(browser) -> int:
    answer = browser.post("/api/sessions", json={})
    assert answer.status_code == 201
    return answer.get_json()["session"]["id"]


def ndjson(response) -> list[dict]:
    """The stream's events (heartbeats left out: a slow first turn may get some)."""
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    return [line for line in lines if line["type"] != "ping"]


def test_a_turn_streams_its_events_as_ndjson_and_is_saved(browser, fake_llm):
    fake_llm.reply(text="Hello from the scripted model.")
    session = new_session(browser)
    answer = browser.post(f"/api/sessions/{session}/turns", json={"message": "hi"})
    assert answer.status_code == 200
    assert answer.mimetype == "application/x-ndjson"
    assert answer.headers["Cache-Control"] == "no-cache"
    assert answer.headers["X-Accel-Buffering"] == "no"
    events = ndjson(answer)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "turn_start" and events[0]["session_id"] == session
    assert events[-1]["type"] == "done" and events[-1]["stop_reason"] == "end_turn"
    assert len({e["turn_id"] for e in events}) == 1
    text = "".join(e["delta"] for e in events if e["type"] == "text")
    messages = browser.get(f"/api/sessions/{session}").get_json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1]["content"] == text == "Hello from the scripted model."


@pytest.mark.parametrize(
    "kwargs",
    [
        {"data": "{not json", "content_type": "application/json"},
        {"data": "message=hi", "content_type": "application/x-www-form-urlencoded"},
        {"json": ["hi"]},
        {"json": {}},
        {"json": {"message": None}},
        {"json": {"message": 42}},
        {"json": {"message": ["hi"]}},
        {"json": {"message": "   "}},
        {"json": {"message": "hi", "model": "other"}},
        {"json": {"message": "x" * 200_001}},
    ],
)
def test_a_bad_message_is_refused_and_nothing_reaches_the_model(browser, fake_llm, kwargs):
    session = new_session(browser)
    answer = browser.post(f"/api/sessions/{session}/turns", **kwargs)
    assert 400 <= answer.status_code < 500 and answer.status_code != 404
    assert answer.get_json()["error"]["code"]
    assert browser.get(f"/api/sessions/{session}").get_json()["messages"] == []
    assert fake_llm.requests == []


def test_unknown_and_deleted_sessions_answer_404(browser, fake_llm):
    for path in ("/api/sessions/999999/turns", "/api/sessions/0/turns", "/api/sessions/x/turns"):
        answer = browser.post(path, json={"message": "hi"})
        assert answer.status_code == 404, path
        assert answer.get_json()["error"]["code"]
    session = new_session(browser)
    assert browser.delete(f"/api/sessions/{session}").status_code == 204
    answer = browser.post(f"/api/sessions/{session}/turns", json={"message": "hi"})
    assert answer.status_code == 404
    assert fake_llm.requests == []


def test_a_busy_session_answers_409_with_the_running_turn_id(browser, fake_llm):
    fake_llm.reply(text="a slow answer", stall=1.0, stall_after=4)
    fake_llm.reply(text="the next one")
    session = new_session(browser)
    path = f"/api/sessions/{session}/turns"
    first = browser.client.post(
        path, json={"message": "one"}, headers={"X-CSRF-Token": browser.token}, buffered=False
    )
    turn_id = json.loads(next(first.response))["turn_id"]
    second = browser.post(path, json={"message": "two"})
    assert second.status_code == 409
    error = second.get_json()["error"]
    assert error["code"] == "session_busy" and error["turn_id"] == turn_id
    assert b'"done"' in b"".join(first.response)
    first.close()
    assert ndjson(browser.post(path, json={"message": "two"}))[-1]["stop_reason"] == "end_turn"


def test_events_replay_after_a_seq_and_refuse_bad_ids_and_seqs(browser, fake_llm):
    fake_llm.reply(text="one two three four five six", chunk_size=3)
    session = new_session(browser)
    events = ndjson(browser.post(f"/api/sessions/{session}/turns", json={"message": "count"}))
    turn_id = events[0]["turn_id"]
    assert ndjson(browser.get(f"/api/turns/{turn_id}/events")) == events
    assert ndjson(browser.get(f"/api/turns/{turn_id}/events?after=2")) == events[2:]
    assert ndjson(browser.get(f"/api/turns/{turn_id}/events?after={len(events) + 5}")) == []
    for after in ("-1", "abc", "1.5", "9" * 20, ""):
        answer = browser.get(f"/api/turns/{turn_id}/events?after={after}")
        assert answer.status_code == 400, after
        assert answer.get_json()["error"]["field"] == "after"
    for bad in ("f" * 32, "nope", "F" * 32, "..%2F..%2Fetc", "a" * 33):
        answer = browser.get(f"/api/turns/{bad}/events")
        assert answer.status_code == 404, bad
        assert answer.get_json()["error"]["code"] == "not_found"


def test_an_evicted_turn_answers_410_with_a_pointer_to_its_session(make_app, fake_llm):
    app = make_app(**fake_llm.config_overrides("anthropic"), web_replay_turns=0)
    client = app.test_client()
    browser = ApiClient(client, log_in(client))
    fake_llm.reply(text="kept in the session, not in the pool")
    session = new_session(browser)
    events = ndjson(browser.post(f"/api/sessions/{session}/turns", json={"message": "hi"}))
    for live in app.extensions["hermes.pool"].live_turns():
        live.thread.join(10)
    answer = browser.get(f"/api/turns/{events[0]['turn_id']}/events")
    assert answer.status_code == 410
    error = answer.get_json()["error"]
    assert error["code"] == "turn_gone"
    assert error["session_id"] == session
    assert error["session_url"] == f"/api/sessions/{session}"
    assert browser.get(error["session_url"]).get_json()["messages"][-1]["content"] == (
        "kept in the session, not in the pool"
    )


def test_cancel_stops_a_running_turn_and_is_harmless_afterwards(browser, fake_llm):
    fake_llm.reply(text="some words and then a long silence", stall=30, stall_after=5)
    session = new_session(browser)
    stream = browser.client.post(
        f"/api/sessions/{session}/turns",
        json={"message": "hi"},
        headers={"X-CSRF-Token": browser.token},
        buffered=False,
    )
    seen = b""
    while b'"text"' not in seen:
        seen += next(stream.response)
    turn_id = json.loads(seen.splitlines()[0])["turn_id"]
    answer = browser.post(f"/api/turns/{turn_id}/cancel")
    assert answer.status_code == 202
    assert answer.get_json()["turn"]["id"] == turn_id
    rest = seen + b"".join(stream.response)
    stream.close()
    done = json.loads(rest.splitlines()[-1])
    assert done["type"] == "done" and done["stop_reason"] == "cancelled"
    again = browser.post(f"/api/turns/{turn_id}/cancel")
    assert again.status_code == 200 and again.get_json()["turn"]["status"] == "finished"
    assert browser.post(f"/api/turns/{'0' * 32}/cancel").status_code == 404
    assert browser.get(f"/api/turns/{turn_id}/cancel").status_code == 405


def test_cancel_without_the_csrf_token_is_refused_and_the_turn_goes_on(browser, fake_llm):
    fake_llm.reply(text="an answer worth keeping", stall=0.5, stall_after=4)
    session = new_session(browser)
    stream = browser.client.post(
        f"/api/sessions/{session}/turns",
        json={"message": "hi"},
        headers={"X-CSRF-Token": browser.token},
        buffered=False,
    )
    turn_id = json.loads(next(stream.response))["turn_id"]
    refused = browser.client.post(f"/api/turns/{turn_id}/cancel")
    assert refused.status_code in (400, 403)
    forged = browser.client.post(f"/api/turns/{turn_id}/cancel", headers={"X-CSRF-Token": "forged"})
    assert forged.status_code in (400, 403)
    rest = b"".join(stream.response)
    stream.close()
    assert json.loads(rest.splitlines()[-1])["stop_reason"] == "end_turn"


def test_anonymous_requests_to_the_turn_routes_answer_401(turns_app, fake_llm):
    anonymous = turns_app.test_client()
    for method, path in [
        ("post", "/api/sessions/1/turns"),
        ("get", f"/api/turns/{'a' * 32}/events"),
        ("post", f"/api/turns/{'a' * 32}/cancel"),
    ]:
        answer = getattr(anonymous, method)(path, json={"message": "hi"})
        assert answer.status_code == 401, path
        assert answer.get_json()["error"]["code"]
    assert fake_llm.requests == []


def test_a_server_shutting_down_refuses_new_turns_with_503(turns_app, browser, fake_llm):
    session = new_session(browser)
    turns_app.extensions["hermes.pool"].shutdown(timeout=5)
    answer = browser.post(f"/api/sessions/{session}/turns", json={"message": "hi"})
    assert answer.status_code == 503
    assert answer.get_json()["error"]["code"] == "shutting_down"
    assert fake_llm.requests == []


def test_a_turn_running_elsewhere_makes_the_session_busy_too(turns_app, browser, fake_llm):
    """A turn this pool never started (the REPL, `hermes chat`) still answers 409 with its id."""
    session = new_session(browser)
    store = turns_app.extensions["hermes.runtime"].store
    store.start_turn(session, "c" * 32)  # what another surface's turn records
    answer = browser.post(f"/api/sessions/{session}/turns", json={"message": "hi"})
    assert answer.status_code == 409
    error = answer.get_json()["error"]
    assert error["code"] == "session_busy" and error["turn_id"] == "c" * 32
    assert turns_app.extensions["hermes.pool"].running(session) is None  # nothing left behind
    store.finish_turn("c" * 32, "end_turn")
    fake_llm.reply(text="free again")
    assert (
        ndjson(browser.post(f"/api/sessions/{session}/turns", json={"message": "hi"}))[-1][
            "stop_reason"
        ]
        == "end_turn"
    )
