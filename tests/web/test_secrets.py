"""No secret (API key, password, secret key) in anything the server writes.

One run exercises logins that fail and succeed, the lockout, every API's
errors, an unexpected 500, pages and, when the turns module is present, a
turn through the real SDK; then every response body and header, every log
record and HERMES_HOME/hermes.log are searched for each secret.
"""

from __future__ import annotations

import json
import logging

from tests.web.conftest import PASSWORD, SECRET_KEY, ApiClient, csrf_of

API_KEY = "sk-ant-test-key-that-must-never-leak-42"


def test_no_secret_appears_in_responses_headers_or_logs(make_app, fake_llm, caplog, hermes_home):
    caplog.set_level(logging.DEBUG)
    overrides = fake_llm.config_overrides("anthropic", api_key=API_KEY)
    app = make_app(**overrides, max_retries=0)

    @app.get("/api/explode")
    def explode():
        raise RuntimeError("unexpected")

    written: list[str] = []

    def record(response):
        written.append(response.get_data(as_text=True))
        written.extend(f"{name}: {value}" for name, value in response.headers.items())
        return response

    browser = app.test_client()
    token = csrf_of(browser.get("/login").text)
    for attempt in ("wrong", PASSWORD[:-1], "", PASSWORD + PASSWORD):
        record(browser.post("/login", data={"password": attempt, "csrf_token": token}))
    record(browser.post("/login", data={"password": PASSWORD, "csrf_token": "bad"}))
    app.extensions["hermes.limiter"].reset()
    record(browser.post("/login", data={"password": PASSWORD, "csrf_token": token}))
    api = ApiClient(browser, csrf_of(record(browser.get("/")).text))

    session_id = record(api.post("/api/sessions")).json["session"]["id"]
    for call in (
        lambda: api.get("/api/sessions"),
        lambda: api.get(f"/api/sessions/{session_id}"),
        lambda: api.get("/api/sessions/999"),
        lambda: api.post("/api/sessions", data="{", content_type="application/json"),
        lambda: api.patch(f"/api/sessions/{session_id}", json={"title": 1}),
        lambda: api.get("/api/memory/search?q=hello&limit=x"),
        lambda: api.get("/api/memory/profile"),
        lambda: api.post("/api/skills", json={"name": "../x"}),
        lambda: api.get("/api/skills/nope"),
        lambda: api.get("/api/explode"),
        lambda: api.get("/healthz"),
        lambda: api.get("/memory?q=x"),
        lambda: api.get("/skills"),
        lambda: browser.post("/api/sessions"),
        lambda: browser.get("/api/sessions", headers={"Cookie": "hermes_session=forged"}),
    ):
        record(call())

    if "turns" in app.blueprints:
        fake_llm.reply("Hello from the model.")
        response = record(api.post(f"/api/sessions/{session_id}/turns", json={"message": "hi"}))
        events = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
        text = "".join(event.get("delta", "") for event in events if event["type"] == "text")
        assert text == "Hello from the model."
        fake_llm.error(401, "invalid x-api-key")
        record(api.post(f"/api/sessions/{session_id}/turns", json={"message": "again"}))

    record(api.post("/logout"))
    app.extensions["hermes.runtime"].close()

    log_file = hermes_home / "hermes.log"
    everything = "\n".join(
        [*written, caplog.text, log_file.read_text() if log_file.exists() else ""]
    )
    assert "failed login" in everything  # the logs did record the attempts...
    for secret in (PASSWORD, SECRET_KEY, API_KEY):
        assert secret not in everything  # ...but never a secret
    assert PASSWORD[:-1] not in everything  # not even a wrong guess close to it
