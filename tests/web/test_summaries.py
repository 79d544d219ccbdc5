"""Starting a new chat summarizes the one left, in the background, through the real SDK."""

from __future__ import annotations

import threading
import time

import pytest

from hermes.messages import Message
from web import summaries


@pytest.fixture
def app(make_app, fake_llm):
    return make_app(**fake_llm.config_overrides("anthropic"), max_retries=0)


def _chat(store, *texts):
    session_id = store.create_session(title="Garden", source="web").id
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        store.add_message(session_id, Message(role=role, content=text))
    return session_id


def _wait_for_summary(store, session_id, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        summary = store.get_session(session_id).summary
        if summary:
            return summary
        time.sleep(0.05)
    return None


def test_new_chat_summarizes_the_session_left(api, app_store, fake_llm):
    left = _chat(app_store, "which tomatoes grow in shade?", "Cherry ones.", "and basil?", "Yes.")
    fake_llm.reply("The user asked about shade-tolerant tomatoes and basil.")
    response = api.post("/api/sessions", json={"previous_session_id": left})
    assert response.status_code == 201  # answered without waiting for the model
    summary = _wait_for_summary(app_store, left)
    assert summary == "The user asked about shade-tolerant tomatoes and basil."
    assert "tomatoes grow in shade" in fake_llm.last_request.body.decode()


def test_without_previous_session_id_the_latest_session_is_the_one_left(api, app_store, fake_llm):
    left = _chat(app_store, "q one", "a one", "q two", "a two")
    fake_llm.reply("Two questions were asked.")
    assert api.post("/api/sessions").status_code == 201
    assert _wait_for_summary(app_store, left) == "Two questions were asked."


def test_short_or_summarized_sessions_cost_no_model_call(api, app_store, fake_llm):
    short = _chat(app_store, "just one question", "one answer")
    done = _chat(app_store, "q", "a", "q2", "a2")
    app_store.update_session(done, summary="Already written.")
    for left in (short, done):
        assert api.post("/api/sessions", json={"previous_session_id": left}).status_code == 201
    time.sleep(0.5)
    assert fake_llm.requests == []
    assert app_store.get_session(short).summary is None
    assert app_store.get_session(done).summary == "Already written."


def test_a_failing_model_loses_nothing(api, app_store, fake_llm):
    left = _chat(app_store, "q", "a", "q2", "a2")
    fake_llm.error(500, "overloaded")
    assert api.post("/api/sessions", json={"previous_session_id": left}).status_code == 201
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not fake_llm.requests:
        time.sleep(0.05)
    time.sleep(0.3)
    assert app_store.get_session(left).summary is None
    assert app_store.get_session(left).message_count == 4


def test_an_unknown_previous_session_is_ignored(api, fake_llm):
    response = api.post("/api/sessions", json={"previous_session_id": 12345})
    assert response.status_code == 201
    assert fake_llm.requests == []


def test_one_summary_at_a_time_per_session(app, app_store, fake_llm):
    left = _chat(app_store, "q", "a", "q2", "a2")
    runtime = app.extensions["hermes.runtime"]
    fake_llm.reply("Only once.", delay=0.5)  # still running when the next two ask
    threads = [summaries.summarize_in_background(runtime, left) for _ in range(3)]
    started = [t for t in threads if isinstance(t, threading.Thread)]
    assert len(started) == 1
    started[0].join(timeout=30)
    assert app_store.get_session(left).summary == "Only once."
