"""The gate: password login, cookie flags, lockout, idle expiry, logout, CSRF, cross-site."""

from __future__ import annotations

import json
import time

import pytest

from tests.web.conftest import PASSWORD, csrf_of, log_in
from web.auth import LOGIN_LIMIT, issue_login_token
from web.security import CONTENT_SECURITY_POLICY


def _login(client, password, token=None, **kw):
    token = token or csrf_of(client.get("/login").text)
    return client.post("/login", data={"password": password, "csrf_token": token}, **kw)


def test_login_sets_an_httponly_lax_cookie_and_redirects_home(client):
    response = _login(client, PASSWORD)
    assert response.status_code == 302
    assert response.headers["Location"] == "/"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    assert "Secure" not in cookie  # plain http: a Secure cookie would never come back
    assert client.get("/api/sessions").status_code == 200


def test_cookie_is_secure_over_https(client):
    token = csrf_of(client.get("/login", base_url="https://localhost").text)
    response = client.post(
        "/login",
        data={"password": PASSWORD, "csrf_token": token},
        base_url="https://localhost",
    )
    assert response.status_code == 302
    assert "Secure" in response.headers["Set-Cookie"]


def test_wrong_password_is_refused_and_lets_nobody_in(client):
    response = _login(client, "wrong")
    assert response.status_code == 401
    assert "Wrong password" in response.text
    assert client.get("/api/sessions").status_code == 401


def test_empty_and_odd_passwords_are_refused(client):
    for attempt in ("", PASSWORD + " ", PASSWORD[:-1], "é" * 1000):
        assert _login(client, attempt).status_code == 401
        client.application.extensions["hermes.limiter"].reset()


def test_next_goes_back_to_the_page_and_never_off_site(client):
    response = client.get("/sessions/1?x=1")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/login?next=")
    token = csrf_of(client.get("/login").text)
    done = client.post(
        "/login?next=/memory%3Fq%3Dtea", data={"password": PASSWORD, "csrf_token": token}
    )
    assert done.headers["Location"] == "/memory?q=tea"
    client.post("/logout", headers={"X-CSRF-Token": csrf_of(client.get("/").text)})
    for evil in ("//evil.example/x", "https://evil.example/", "/\\evil.example"):
        token = csrf_of(client.get("/login").text)
        done = client.post(
            "/login", query_string={"next": evil}, data={"password": PASSWORD, "csrf_token": token}
        )
        assert done.headers["Location"] == "/", evil
        client.post("/logout", headers={"X-CSRF-Token": csrf_of(client.get("/").text)})


# Browsers drop tabs and newlines from a Location: "/\t/evil.example" would be
# "//evil.example", another host. A newline in a header was a 500.
HOSTILE_NEXT = [
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r/evil.example",
    "/\t\t/evil.example/x",
    "/ /evil.example",
    "/\u2028/evil.example",
    "/\x00/evil.example",
    "\t//evil.example",
    " /x",
    "/\\evil.example",
    "https:/evil.example",
]


@pytest.mark.parametrize("evil", HOSTILE_NEXT)
def test_next_with_control_characters_or_spaces_goes_home(client, evil):
    token = csrf_of(client.get("/login").text)
    done = client.post(
        "/login", query_string={"next": evil}, data={"password": PASSWORD, "csrf_token": token}
    )
    assert (done.status_code, done.headers["Location"]) == (302, "/")
    # Already logged in, GET /login?next= redirects at once: the same check applies.
    again = client.get("/login", query_string={"next": evil})
    assert (again.status_code, again.headers["Location"]) == (302, "/")
    # The hidden form field is checked the same way.
    client.post("/logout", headers={"X-CSRF-Token": csrf_of(client.get("/").text)})
    token = csrf_of(client.get("/login").text)
    done = client.post("/login", data={"password": PASSWORD, "csrf_token": token, "next": evil})
    assert done.headers["Location"] == "/"


def test_the_login_form_carries_next_so_the_user_lands_where_they_were_going(client):
    asked = client.get("/memory?q=tea%20pot&x=%2F")
    assert asked.status_code == 302
    page = client.get(asked.headers["Location"])  # the form, as the browser shows it
    assert '<form method="post" action="/login"' in page.text
    assert '<input type="hidden" name="next" value="/memory?q=tea%20pot&amp;x=%2F">' in page.text
    # The browser posts the form's fields to its bare action, /login.
    done = client.post(
        "/login",
        data={
            "password": PASSWORD,
            "csrf_token": csrf_of(page.text),
            "next": "/memory?q=tea%20pot&x=%2F",
        },
    )
    assert done.headers["Location"] == "/memory?q=tea%20pot&x=%2F"


def test_a_wrong_password_keeps_next_in_the_form(client):
    token = csrf_of(client.get("/login").text)
    failed = client.post(
        "/login", data={"password": "nope", "csrf_token": token, "next": "/skills/tea"}
    )
    assert failed.status_code == 401
    assert '<input type="hidden" name="next" value="/skills/tea">' in failed.text
    assert 'name="next"' not in client.get("/login").text  # nothing to carry: no field


def test_five_failures_lock_the_address_out_with_retry_after(client):
    assert LOGIN_LIMIT == "5 per 5 minutes"
    for _ in range(5):
        assert _login(client, "wrong").status_code == 401
    locked = _login(client, PASSWORD)  # even the right password waits out the window
    assert locked.status_code == 429
    retry_after = int(locked.headers["Retry-After"])
    assert 0 < retry_after <= 300
    assert client.get("/api/sessions").status_code == 401
    # The form itself still loads, and another address is not affected.
    assert client.get("/login").status_code == 200
    other = client.application.test_client()
    token = csrf_of(other.get("/login", environ_base={"REMOTE_ADDR": "10.0.0.9"}).text)
    response = other.post(
        "/login",
        data={"password": PASSWORD, "csrf_token": token},
        environ_base={"REMOTE_ADDR": "10.0.0.9"},
    )
    assert response.status_code == 302


def test_successful_logins_are_not_counted(app):
    for _ in range(8):
        browser = app.test_client()
        assert _login(browser, PASSWORD).status_code == 302
    browser = app.test_client()
    for _ in range(4):
        assert _login(browser, "wrong").status_code == 401
    assert _login(browser, PASSWORD).status_code == 302


def test_lockout_storage_comes_from_the_config(make_app, tmp_path):
    app = make_app(ratelimit_storage="memory://")
    assert app.extensions["hermes.limiter"]._storage_uri == "memory://"


def test_proxy_hops_decide_the_client_address(make_app):
    """Behind one trusted proxy, X-Forwarded-For names the client; with none it is ignored."""

    def attempt(app, forwarded_for, password):
        client = app.test_client()
        headers = {"X-Forwarded-For": forwarded_for}
        token = csrf_of(client.get("/login", headers=headers).text)
        return client.post(
            "/login", data={"password": password, "csrf_token": token}, headers=headers
        ).status_code

    proxied = make_app(trusted_proxies=1)
    for _ in range(5):
        assert attempt(proxied, "203.0.113.5", "wrong") == 401
    assert attempt(proxied, "203.0.113.5", PASSWORD) == 429
    assert attempt(proxied, "203.0.113.6", PASSWORD) == 302  # another client, same proxy

    direct = make_app(trusted_proxies=0)
    for _ in range(5):
        assert attempt(direct, "203.0.113.5", "wrong") == 401
    assert attempt(direct, "203.0.113.6", PASSWORD) == 429  # a forged header buys nothing


def test_https_behind_a_trusted_proxy_gets_a_secure_cookie(make_app):
    app = make_app(trusted_proxies=1)
    client = app.test_client()
    headers = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "hermes.example"}
    token = csrf_of(client.get("/login", headers=headers).text)
    response = client.post(
        "/login", data={"password": PASSWORD, "csrf_token": token}, headers=headers
    )
    assert "Secure" in response.headers["Set-Cookie"]


def test_login_lapses_after_the_idle_time(client):
    log_in(client)
    assert client.get("/api/sessions").status_code == 200
    idle = client.application.config["HERMES_SESSION_IDLE_SECONDS"]
    with client.session_transaction() as session:
        session["seen"] = time.time() - idle - 5
    assert client.get("/api/sessions").status_code == 401
    assert client.get("/").status_code == 302


def test_recent_activity_keeps_the_login(client):
    log_in(client)
    idle = client.application.config["HERMES_SESSION_IDLE_SECONDS"]
    with client.session_transaction() as session:
        session["seen"] = time.time() - idle + 60
    assert client.get("/api/sessions").status_code == 200
    with client.session_transaction() as session:
        assert time.time() - session["seen"] < 5  # refreshed


def test_idle_minutes_come_from_the_config(make_app):
    app = make_app(web_session_idle_minutes=7)
    assert app.config["HERMES_SESSION_IDLE_SECONDS"] == 7 * 60


def test_logout_ends_the_login(client):
    token = log_in(client)
    response = client.post("/logout", headers={"X-CSRF-Token": token})
    assert response.status_code == 302
    assert client.get("/api/sessions").status_code == 401


def test_logout_needs_the_csrf_token(client):
    log_in(client)
    assert client.post("/logout").status_code == 403
    assert client.get("/api/sessions").status_code == 200


def test_changing_the_password_logs_everyone_out(make_app, web_config):
    from web import create_app

    app = make_app()
    client = app.test_client()
    log_in(client)
    cookie = client.get_cookie("hermes_session").value
    other = create_app(web_config(web_password="a new password"))
    try:
        browser = other.test_client()
        browser.set_cookie("hermes_session", cookie)
        assert browser.get("/api/sessions").status_code == 401
    finally:
        other.extensions["hermes.runtime"].close()
        pool = other.extensions.get("hermes.pool")
        if pool is not None:
            pool.shutdown(timeout=10)


def test_csrf_token_is_new_at_each_login(client):
    before = csrf_of(client.get("/login").text)
    after = log_in(client)
    assert before != after
    response = client.post("/api/sessions", headers={"X-CSRF-Token": before})
    assert response.status_code == 403


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_state_changes_need_the_csrf_header(client, app_store, method):
    token = log_in(client)
    session_id = app_store.create_session(title="keep me", source="web").id
    url = {
        "post": "/api/sessions",
        "put": "/api/memory/profile",
        "patch": f"/api/sessions/{session_id}",
        "delete": f"/api/sessions/{session_id}",
    }[method]
    send = getattr(client, method)
    for headers in ({}, {"X-CSRF-Token": "wrong"}, {"X-CSRF-Token": token[:-1]}):
        response = send(url, json={"title": "changed"}, headers=headers)
        assert response.status_code == 403, (method, headers)
        assert response.json["error"]["code"] == "csrf_failed"
    assert app_store.get_session(session_id).title == "keep me"
    assert len(app_store.list_sessions()[0]) == 1


def test_login_form_needs_its_csrf_token(client):
    client.get("/login")
    response = client.post("/login", data={"password": PASSWORD})
    assert response.status_code == 403
    assert client.get("/api/sessions").status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://localhost.evil.example"},
        {"Origin": "http://localhost:8001"},  # same host name, another port: another origin
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_cross_site_requests_are_refused_even_with_the_token(client, app_store, headers):
    token = log_in(client)
    response = client.post("/api/sessions", headers={"X-CSRF-Token": token, **headers})
    assert response.status_code == 403
    assert response.json["error"]["code"] == "cross_site"
    assert app_store.list_sessions()[0] == []


def test_same_origin_requests_pass(client):
    token = log_in(client)
    response = client.post(
        "/api/sessions",
        headers={
            "X-CSRF-Token": token,
            "Origin": "http://localhost",
            "Sec-Fetch-Site": "same-origin",
        },
    )
    assert response.status_code == 201


def test_cross_site_login_attempt_is_refused(client):
    token = csrf_of(client.get("/login").text)
    response = client.post(
        "/login",
        data={"password": PASSWORD, "csrf_token": token},
        headers={"Origin": "https://evil.example"},
    )
    assert response.status_code == 403


def test_security_headers_are_on_every_response(client, api):
    for response in (
        client.get("/login"),
        client.get("/healthz"),
        client.get("/api/sessions"),
        client.get("/"),
        client.get("/no/such/page"),
        api.get("/api/sessions"),
        api.get("/"),
        api.post("/api/sessions", data="{", content_type="application/json"),
    ):
        assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "same-origin"
    assert CONTENT_SECURITY_POLICY == (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        "form-action 'self'"
    )


def test_every_page_carries_the_csrf_meta(client, api):
    assert csrf_of(client.get("/login").text)
    for url in ("/", "/memory?q=x", "/skills"):
        assert csrf_of(api.get(url).text) == api.token


# ---- the other two ways in ----------------------------------------------------


def test_open_mode_needs_no_login_but_still_the_csrf_token(make_app):
    app = make_app(web_password=None, web_allow_no_auth=True)
    client = app.test_client()
    assert client.get("/api/sessions").status_code == 200
    assert client.post("/api/sessions").status_code == 403
    token = csrf_of(client.get("/").text)
    assert client.post("/api/sessions", headers={"X-CSRF-Token": token}).status_code == 201
    # There is no password to try: /login sends the visitor straight in.
    assert client.get("/login").headers["Location"] == "/"
    assert _login(client, "anything", token=token).status_code == 400


def test_one_time_login_link_works_once(make_app):
    app = make_app(web_password=None, web_allow_no_auth=True)
    token = issue_login_token(app)
    stranger = app.test_client()
    assert stranger.get("/api/sessions").status_code == 401
    assert stranger.get("/login?token=not-it").status_code == 403

    browser = app.test_client()
    response = browser.get(f"/login?token={token}")
    assert response.status_code == 302
    assert response.headers["Location"] == "/"
    assert browser.get("/api/sessions").status_code == 200

    late = app.test_client()
    used = late.get(f"/login?token={token}")
    assert used.status_code == 403
    assert late.get("/api/sessions").status_code == 401


def test_the_lockout_is_the_login_page_with_a_message(client):
    for _ in range(5):
        _login(client, "wrong")
    locked = _login(client, PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.text
    assert csrf_of(locked.text)
    assert int(locked.headers["Retry-After"]) > 0


def test_a_cookie_sent_back_after_logout_stays_logged_out(app, client):
    """A request in flight during logout (or a copied cookie) cannot undo the logout."""
    token = log_in(client)
    before = client.get_cookie("hermes_session").value
    assert client.post("/logout", headers={"X-CSRF-Token": token}).status_code == 302
    client.set_cookie("hermes_session", before)  # what the in-flight response would have set
    assert client.get("/api/sessions").status_code == 401
    # Logging in again works, with a new login id.
    log_in(client)
    assert client.get("/api/sessions").status_code == 200


def test_a_logged_out_cookie_stays_dead_after_a_restart(make_app, hermes_home):
    """The ended login ids live in HERMES_HOME, so a redeploy does not revive a copied cookie."""
    first = make_app()
    client = first.test_client()
    token = log_in(client)
    copied = client.get_cookie("hermes_session").value
    assert client.post("/logout", headers={"X-CSRF-Token": token}).status_code == 302
    saved = hermes_home / "logouts.json"
    assert saved.stat().st_mode & 0o777 == 0o600
    assert copied not in saved.read_text()  # digests only, nothing cookie-like

    restarted = make_app()  # a new process on the same home
    thief = restarted.test_client()
    thief.set_cookie("hermes_session", copied)
    assert thief.get("/api/sessions").status_code == 401
    # A login that did not log out keeps working across the restart.
    other = first.test_client()
    log_in(other)
    kept = other.get_cookie("hermes_session").value
    still = restarted.test_client()
    still.set_cookie("hermes_session", kept)
    assert still.get("/api/sessions").status_code == 200


def test_a_logout_in_one_process_is_seen_by_another_on_the_same_home(make_app):
    one, two = make_app(), make_app()
    browser = one.test_client()
    token = log_in(browser)
    copied = browser.get_cookie("hermes_session").value
    elsewhere = two.test_client()
    elsewhere.set_cookie("hermes_session", copied)
    assert elsewhere.get("/api/sessions").status_code == 200
    browser.post("/logout", headers={"X-CSRF-Token": token})
    assert elsewhere.get("/api/sessions").status_code == 401


def test_old_logouts_are_pruned_and_a_damaged_file_is_survived(make_app, hermes_home):
    saved = hermes_home / "logouts.json"
    stale = {"0" * 64: time.time() - 10 * 86_400, "not-a-number": "x"}
    saved.write_text(json.dumps(stale))
    app = make_app()
    client = app.test_client()
    token = log_in(client)
    client.post("/logout", headers={"X-CSRF-Token": token})
    kept = json.loads(saved.read_text())
    assert "0" * 64 not in kept and "not-a-number" not in kept and len(kept) == 1
    saved.write_text("{ not json")
    damaged = make_app()  # starts, logs a warning, and logins still work
    log_in(damaged.test_client())
