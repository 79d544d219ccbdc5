"""Web fixtures: a real app on the test's own HERMES_HOME and SQLite file, and clients.

- ``web_config(**overrides)``: a Config with a secret key and a password set.
- ``app``: ``create_app(web_config())``.
- ``client``: an anonymous test client of ``app``.
- ``api``: a logged-in :class:`ApiClient` (adds the CSRF header to every call).
- ``app_store``: the app's own Store.
"""

from __future__ import annotations

import re

import pytest

from web import create_app

SECRET_KEY = "test-secret-key-0123456789abcdef-never-shown"
PASSWORD = "correct horse battery staple"

_CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


def csrf_of(html: str) -> str:
    """The CSRF token in a page's meta tag."""
    found = _CSRF_META.search(html)
    assert found, "the page has no csrf-token meta tag"
    return found.group(1)


class ApiClient:
    """A logged-in browser: the test client plus the page's CSRF token on every request."""

    def __init__(self, client, token: str):
        self.client = client
        self.token = token

    def _headers(self, headers):
        return {"X-CSRF-Token": self.token, **(headers or {})}

    def get(self, url, **kw):
        return self.client.get(url, **kw)

    def post(self, url, headers=None, **kw):
        return self.client.post(url, headers=self._headers(headers), **kw)

    def put(self, url, headers=None, **kw):
        return self.client.put(url, headers=self._headers(headers), **kw)

    def patch(self, url, headers=None, **kw):
        return self.client.patch(url, headers=self._headers(headers), **kw)

    def delete(self, url, headers=None, **kw):
        return self.client.delete(url, headers=self._headers(headers), **kw)


def log_in(client, password: str = PASSWORD) -> str:
    """Log ``client`` in through the form; return the CSRF token of the logged-in pages."""
    token = csrf_of(client.get("/login").text)
    response = client.post("/login", data={"password": password, "csrf_token": token})
    assert response.status_code == 302, response.text
    return csrf_of(client.get("/").text)


@pytest.fixture
def web_config(make_config):
    def make(**overrides):
        values = {"secret_key": SECRET_KEY, "web_password": PASSWORD, **overrides}
        return make_config(**values)

    return make


@pytest.fixture
def app(web_config):
    application = create_app(web_config())
    yield application
    _close(application)


def _close(application) -> None:
    pool = application.extensions.get("hermes.pool")
    if pool is not None and hasattr(pool, "shutdown"):
        pool.shutdown(timeout=10)
    application.extensions["hermes.runtime"].close()


@pytest.fixture
def make_app(web_config):
    """Factory for apps with other settings; each one is closed after the test."""
    made = []

    def make(**overrides):
        application = create_app(web_config(**overrides))
        made.append(application)
        return application

    yield make
    for application in made:
        _close(application)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def api(app) -> ApiClient:
    browser = app.test_client()
    return ApiClient(browser, log_in(browser))


@pytest.fixture
def app_store(app):
    """The app's own Store (the same database the routes use)."""
    return app.extensions["hermes.runtime"].store
