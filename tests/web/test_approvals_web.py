"""Approvals over HTTP: the stream pauses on an approval event, the POST resumes the turn."""

from __future__ import annotations

import json
import threading
import time

import pytest

# Until the dashboard (web/, tests/web/) is in this tree there is nothing to test.
pytest.importorskip("web.turns")

from tests.web.conftest import ApiClient, log_in


@pytest.fixture
def shell_app(make_app, fake_llm):
    return make_app(
        **fake_llm.config_overrides("anthropic"),
        max_retries=0,
        web_enable_shell=True,
        web_enable_write=True,
        approval_timeout=20.0,
    )


def logged_in(app) -> ApiClient:
    client = app.test_client()
    return ApiClient(client, log_in(client))


def events_of(response) -> list[dict]:
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    return [line for line in lines if line["type"] != "ping"]


class Turn:
    """A turn started in the background (its stream read to the end); the test answers it."""

    def __init__(self, app, session_id: int, message: str):
        self.browser = logged_in(app)
        self.events: list[dict] = []
        self.thread = threading.Thread(target=self._run, args=(session_id, message), daemon=True)
        self.thread.start()
        pool = app.extensions["hermes.pool"]
        deadline = time.monotonic() + 30
        self.turn_id = None
        while self.turn_id is None and time.monotonic() < deadline:
            self.turn_id = pool.running(session_id)
            time.sleep(0.02)
        assert self.turn_id

    def _run(self, session_id, message):
        answer = self.browser.post(f"/api/sessions/{session_id}/turns", json={"message": message})
        self.events = events_of(answer)

    def wait(self):
        self.thread.join(60)
        assert not self.thread.is_alive()
        return self.events


def waiting(browser, turn_id: str, timeout: float = 30) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = browser.get(f"/api/turns/{turn_id}/approvals").get_json()["pending"]
        if pending:
            return pending
        time.sleep(0.05)
    raise AssertionError("no approval became pending")


def new_session(browser) -> int:
    return browser.post("/api/sessions", json={}).get_json()["session"]["id"]


def test_an_approved_command_runs_and_the_decision_is_in_the_message_json(
    shell_app, fake_llm, workspace
):
    (workspace / "old").mkdir()
    fake_llm.reply(tool_calls=[("run_bash", {"command": "rm -rf old && echo removed"})])
    fake_llm.reply(text="Removed.")
    browser = logged_in(shell_app)
    session = new_session(browser)
    turn = Turn(shell_app, session, "remove old")
    [pending] = waiting(browser, turn.turn_id)
    assert pending["tool"] == "run_bash" and "recursively" in pending["reason"]

    # While it waits, a replay (a reloaded page) carries the approval event.
    replay = browser.get(f"/api/turns/{turn.turn_id}/events?after=0", buffered=False)
    first_lines = []
    for chunk in replay.response:
        first_lines += [json.loads(x) for x in chunk.decode().splitlines()]
        if any(e["type"] == "approval" for e in first_lines):
            break
    replay.close()
    approval = next(e for e in first_lines if e["type"] == "approval")
    assert approval["id"] == pending["id"]
    assert set(approval) == {"seq", "turn_id", "type", "id", "tool", "input", "reason"}

    answer = browser.post(
        f"/api/turns/{turn.turn_id}/approvals/{pending['id']}", json={"decision": "once"}
    )
    assert answer.status_code == 200, answer.get_json()
    events = turn.wait()
    kinds = [e["type"] for e in events]
    assert kinds.index("approval") < kinds.index("tool_result")
    result = next(e for e in events if e["type"] == "tool_result")
    assert "removed" in result["output"] and result["approval"]["decision"] == "once"
    assert not (workspace / "old").exists()
    messages = browser.get(f"/api/sessions/{session}").get_json()["messages"]
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool["approval"]["decision"] == "once" and tool["approval"]["by"] == "user"
    # Answered once: a second answer finds nothing waiting.
    again = browser.post(
        f"/api/turns/{turn.turn_id}/approvals/{pending['id']}", json={"decision": "deny"}
    )
    assert again.status_code == 404 and again.get_json()["error"]["code"] == "not_found"


def test_bad_answers_are_refused_and_deny_keeps_the_command_from_running(
    shell_app, fake_llm, workspace
):
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch ran && sudo true"})])
    fake_llm.reply(text="Fine.")
    browser = logged_in(shell_app)
    turn = Turn(shell_app, new_session(browser), "go")
    [pending] = waiting(browser, turn.turn_id)
    url = f"/api/turns/{turn.turn_id}/approvals/{pending['id']}"
    for body in ({"decision": "yes"}, {"decision": 1}, {}, ["once"]):
        bad = browser.post(url, json=body)
        assert bad.status_code == 400, body
    wrong_turn = browser.post(
        f"/api/turns/{'0' * 32}/approvals/{pending['id']}", json={"decision": "once"}
    )
    assert wrong_turn.status_code == 404
    no_csrf = browser.client.post(url, json={"decision": "once"})
    assert no_csrf.status_code in (400, 403)
    anonymous = shell_app.test_client().post(url, json={"decision": "once"})
    assert anonymous.status_code == 401
    assert browser.post(url, json={"decision": "deny"}).status_code == 200
    events = turn.wait()
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["is_error"] and "denied by the user" in result["output"]
    assert not (workspace / "ran").exists()


def test_a_turn_left_waiting_times_out_as_a_denial(make_app, fake_llm, workspace):
    app = make_app(
        **fake_llm.config_overrides("anthropic"),
        max_retries=0,
        web_enable_shell=True,
        approval_timeout=1.0,
    )
    fake_llm.reply(tool_calls=[("run_bash", {"command": "touch ran && git reset --hard"})])
    fake_llm.reply(text="Nobody answered.")
    browser = logged_in(app)
    session = new_session(browser)
    turn = Turn(app, session, "go")
    [pending] = waiting(browser, turn.turn_id)
    events = turn.wait()
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["approval"]["by"] == "timeout" and result["is_error"]
    assert not (workspace / "ran").exists()
    late = browser.post(
        f"/api/turns/{turn.turn_id}/approvals/{pending['id']}", json={"decision": "once"}
    )
    assert late.status_code == 404
