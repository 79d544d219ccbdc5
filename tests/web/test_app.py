"""The app as a whole: fail-closed start, the URL map behind the gate, one JSON error shape."""

from __future__ import annotations

import re

import pytest

from hermes.errors import ConfigError
from web import MAX_CONTENT_LENGTH, create_app
from web.auth import PUBLIC_ENDPOINTS

# ---- fail closed ----------------------------------------------------------------


def test_no_secret_key_refuses_to_start(web_config):
    with pytest.raises(ConfigError, match="FLASK_SECRET_KEY is not set"):
        create_app(web_config(secret_key=None))


def test_a_short_secret_key_refuses_to_start(web_config):
    with pytest.raises(ConfigError, match="FLASK_SECRET_KEY is too short"):
        create_app(web_config(secret_key="short"))


def test_no_password_refuses_to_start(web_config):
    with pytest.raises(ConfigError, match="HERMES_WEB_PASSWORD is not set.*ALLOW_NO_AUTH"):
        create_app(web_config(web_password=None))


def test_no_password_starts_only_when_explicitly_allowed(make_app):
    app = make_app(web_password=None, web_allow_no_auth=True)
    assert app.config["HERMES_AUTH_MODE"] == "open"


def test_the_app_shares_one_web_runtime(app):
    runtime = app.extensions["hermes.runtime"]
    assert runtime.surface == "web"


# ---- every private route refuses an anonymous request ---------------------------


def _concrete(rule) -> str:
    """A URL for ``rule`` with its variables filled in."""
    values = {}
    for name in rule.arguments:
        converter = rule._converters[name].__class__.__name__
        values[name] = 1 if "Integer" in converter or "Id" in converter else "x" * 32
    return re.sub(r"<[^>]+>", lambda m: str(values[m.group(0)[1:-1].split(":")[-1]]), rule.rule)


def test_every_non_public_route_refuses_anonymous_requests(app):
    client = app.test_client()
    checked = 0
    for rule in app.url_map.iter_rules():
        if rule.endpoint in PUBLIC_ENDPOINTS:
            continue
        url = _concrete(rule)
        for method in sorted(rule.methods - {"OPTIONS", "HEAD"}):
            response = client.open(url, method=method)
            if url.startswith("/api/"):
                assert response.status_code == 401, (method, url, response.status_code)
                assert response.json["error"]["code"] == "login_required"
            else:
                assert response.status_code == 302, (method, url, response.status_code)
                assert response.headers["Location"].startswith("/login")
            checked += 1
    assert checked >= 25  # the walk saw the whole app, turns included


def test_only_login_healthz_and_static_are_public(app):
    # healthz/stream: three pings that let `hermes doctor --url` spot a buffering proxy.
    assert {"auth.login", "health.healthz", "health.healthz_stream", "static"} == PUBLIC_ENDPOINTS
    client = app.test_client()
    assert client.get("/login").status_code == 200
    assert client.get("/healthz").json == {"status": "ok", "db": "ok"}


def test_unknown_api_paths_are_private_too(client):
    assert client.get("/api/no/such/thing").status_code == 401


# ---- one error shape --------------------------------------------------------------


def _is_json_error(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    assert response.mimetype == "application/json"
    error = response.json["error"]
    assert isinstance(error["message"], str) and error["message"]
    if code:
        assert error["code"] == code
    assert "Traceback" not in response.text and "<html" not in response.text.lower()
    return error


def test_api_errors_are_json(api):
    _is_json_error(api.get("/api/no/such/thing"), 404, "not_found")
    _is_json_error(api.get("/api/sessions/999"), 404, "not_found")
    error = _is_json_error(api.post("/api/sessions/1/export"), 405, "method_not_allowed")
    assert error
    response = api.post("/api/sessions/1/export")
    assert "GET" in response.headers["Allow"]
    _is_json_error(api.post("/api/sessions", data="{", content_type="application/json"), 400)


def test_huge_bodies_answer_413_as_json(api, app_store):
    big = "x" * (MAX_CONTENT_LENGTH + 1)
    response = api.post("/api/sessions", data=big, content_type="application/json")
    _is_json_error(response, 413, "too_large")
    response = api.put("/api/memory/profile", data=big, content_type="application/json")
    _is_json_error(response, 413, "too_large")
    assert app_store.list_sessions()[0] == []


def test_an_unexpected_failure_is_a_json_500_without_details(web_config, caplog):
    app = create_app(web_config())
    try:

        @app.get("/api/explode")
        def explode():
            raise RuntimeError("internal detail: /secret/path")

        from tests.web.conftest import ApiClient, log_in

        browser = app.test_client()
        api = ApiClient(browser, log_in(browser))
        response = api.get("/api/explode")
        _is_json_error(response, 500, "internal")
        assert "internal detail" not in response.text
        assert "internal detail" in caplog.text  # the log has it, for the operator
    finally:
        app.extensions["hermes.runtime"].close()
        pool = app.extensions.get("hermes.pool")
        if pool is not None:
            pool.shutdown(timeout=10)


def test_pages_get_a_plain_error_page(api):
    response = api.get("/no/such/page")
    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert api.get("/sessions/999").status_code == 404


def test_healthz_reports_the_database(client):
    response = client.get("/healthz")
    assert response.json == {"status": "ok", "db": "ok"}
    assert "Set-Cookie" not in response.headers or "auth" not in response.headers["Set-Cookie"]
