"""The HTML views render the page team's templates with the right view and context."""

from __future__ import annotations

import re

import pytest

from tests.web.conftest import csrf_of


def _data(html: str, name: str) -> str:
    found = re.search(rf'data-{name}="([^"]*)"', html)
    assert found, f"no data-{name} in the page"
    return found.group(1)


def test_dashboard_opens_the_newest_session(api, app_store):
    assert _data(api.get("/").text, "session-id") == ""  # a new chat
    app_store.create_session(title="old", source="web")
    newest = app_store.create_session(title="new", source="web").id
    page = api.get("/").text
    assert _data(page, "view") == "chat"
    assert _data(page, "session-id") == str(newest)


def test_session_page_is_bookmarkable(api, app_store):
    session_id = app_store.create_session(title="x", source="web").id
    response = api.get(f"/sessions/{session_id}")
    assert response.status_code == 200
    assert _data(response.text, "session-id") == str(session_id)
    assert api.get("/sessions/424242").status_code == 404


def test_memory_page_carries_the_query_escaped(api):
    page = api.get("/memory", query_string={"q": '"><script>alert(1)</script>'}).text
    assert _data(page, "view") == "memory"
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page or "&#34;&gt;&lt;script" in page


@pytest.mark.parametrize(
    "url, view, name", [("/skills", "skills", ""), ("/skills/brew-tea", "skills", "brew-tea")]
)
def test_skills_pages(api, url, view, name):
    page = api.get(url).text
    assert _data(page, "view") == view
    assert _data(page, "skill-name") == name


def test_a_bad_skill_name_in_the_address_is_404(api):
    assert api.get("/skills/..%2F..%2Fetc").status_code == 404
    assert api.get("/skills/Bad_Name").status_code == 404


def test_pages_warn_when_no_model_is_configured(api):
    page = api.get("/").text
    assert "No model provider configured" in page


def test_anonymous_pages_redirect_to_login_with_next(client):
    for url in ("/", "/memory?q=x", "/skills/brew-tea"):
        response = client.get(url)
        assert response.status_code == 302
        assert response.headers["Location"].startswith("/login?next=")


def test_login_page_renders_errors_and_the_token(client):
    page = client.get("/login")
    assert page.status_code == 200
    token = csrf_of(page.text)
    failed = client.post("/login", data={"password": "nope", "csrf_token": token})
    assert "Wrong password" in failed.text
    assert csrf_of(failed.text) == token
