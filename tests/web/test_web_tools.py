"""The dashboard's tool set: no run_bash and no write tools unless the settings say so.

Checked where it matters: in the tool list of the request the model receives
for a turn started through the API (through the real SDK and the scripted server).
"""

from __future__ import annotations

import pytest

from tests.web.conftest import ApiClient, log_in

WRITE_TOOLS = {"write_file", "edit_file"}


def _tools_the_model_saw(app, fake_llm) -> set[str]:
    browser = app.test_client()
    api = ApiClient(browser, log_in(browser))
    session_id = api.post("/api/sessions").json["session"]["id"]
    fake_llm.reply("ok")
    response = api.post(f"/api/sessions/{session_id}/turns", json={"message": "hello"})
    assert response.status_code == 200, response.text
    response.get_data()  # read the stream to its end
    request = fake_llm.requests[0].json
    return {tool["name"] for tool in request["tools"]}


@pytest.fixture
def llm_app(make_app, fake_llm):
    def make(**overrides):
        app = make_app(**fake_llm.config_overrides("anthropic"), max_retries=0, **overrides)
        if "turns" not in app.blueprints:
            pytest.skip("web.turns is not mounted")
        return app

    return make


def test_by_default_the_model_never_sees_shell_or_write_tools(llm_app, fake_llm):
    names = _tools_the_model_saw(llm_app(), fake_llm)
    assert "run_bash" not in names
    assert not names & WRITE_TOOLS
    assert {"read_file", "search_memory", "list_skills"} <= names


def test_the_settings_turn_them_on(llm_app, fake_llm):
    names = _tools_the_model_saw(llm_app(web_enable_shell=True, web_enable_write=True), fake_llm)
    assert "run_bash" in names
    assert names >= WRITE_TOOLS


def test_shell_alone(llm_app, fake_llm):
    names = _tools_the_model_saw(llm_app(web_enable_shell=True), fake_llm)
    assert "run_bash" in names
    assert not names & WRITE_TOOLS
