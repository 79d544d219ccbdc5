"""Browser fixtures: one real dashboard under gunicorn and one chromium for the whole run.

Chromium is Debian's (/usr/bin/chromium, installed by .ci/run); without it these tests skip
with a message saying how to install it. Screenshots go to tests/browser/screenshots/
(git-ignored). Each test gets a fresh browser context already logged in, and fails when the
page logged a console error, violated the CSP, or executed anything from the XSS corpus.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.live import CHROMIUM, CHROMIUM_ARGS, PASSWORD, LiveApp

SCREENSHOTS = Path(__file__).parent / "screenshots"

if not os.path.exists(CHROMIUM):
    pytest.skip(
        f"browser tests need Debian's chromium at {CHROMIUM}: apt-get install -y chromium "
        "(.ci/run does this)",
        allow_module_level=True,
    )

from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright  # noqa: E402

# A loaded CI machine (2 cores, many jobs) is slow; assertions wait, they do not time things.
expect.set_options(timeout=20_000)

# Runs in every page before its own scripts: records CSP violations, and defines the canary
# the XSS corpus tries to set, as a trap that remembers any write.
WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push(e.violatedDirective + ' ' + e.blockedURI);
});
window.__xssHits = 0;
Object.defineProperty(window, 'hermesPwned', {
  configurable: false,
  get() { return undefined; },
  set(v) { window.__xssHits += 1; },
});
"""


@pytest.fixture(scope="session")
def live(tmp_path_factory) -> Iterator[LiveApp]:
    home = tmp_path_factory.mktemp("browser") / "home"
    home.mkdir()
    # Streams are cut after a few seconds, as a proxy would, so every longer turn in these
    # tests also proves the page resumes through events?after= by itself.
    app = LiveApp(home, extra_env={"HERMES_WEB_STREAM_MAX_SECONDS": "4"}).start()
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def auth_state(browser: Browser, live: LiveApp, tmp_path_factory) -> str:
    """Log in once through the real form; later contexts reuse the cookie."""
    path = tmp_path_factory.mktemp("auth") / "state.json"
    context = browser.new_context()
    page = context.new_page()
    page.goto(live.url + "/login")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda u: "/login" not in u)
    context.storage_state(path=str(path))
    context.close()
    return str(path)


class Watch:
    """What a page did that it must not: console errors, CSP violations, dialogs."""

    def __init__(self) -> None:
        self.allowed: list[str] = []
        self.console_errors: list[str] = []
        self.dialogs: list[str] = []
        self.page_errors: list[str] = []

    def attach(self, page: Page) -> None:
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))

        def on_dialog(d):
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", on_dialog)

    def allow_http_status(self, status: int) -> None:
        """The test provokes this HTTP error on purpose; chromium logs each one as an error."""
        self.allowed.append(f"the server responded with a status of {status}")

    def check(self, page: Page) -> None:
        csp = page.evaluate("window.__csp || []") if not page.is_closed() else []
        hits = page.evaluate("window.__xssHits || 0") if not page.is_closed() else 0
        assert not self.dialogs, f"a dialog opened: {self.dialogs}"
        assert hits == 0, "the XSS canary was set"
        assert not csp, f"CSP violations: {csp}"
        assert not self.page_errors, f"uncaught errors: {self.page_errors}"
        errors = [e for e in self.console_errors if not any(a in e for a in self.allowed)]
        assert not errors, f"console errors: {errors}"


@pytest.fixture
def context(browser: Browser, auth_state: str, live: LiveApp) -> Iterator[BrowserContext]:
    ctx = browser.new_context(
        storage_state=auth_state, base_url=live.url, viewport={"width": 1280, "height": 800}
    )
    ctx.add_init_script(WATCH)
    ctx.set_default_timeout(15_000)
    yield ctx
    ctx.close()


@pytest.fixture(autouse=True)
def fresh_script(request) -> None:
    """Each test scripts the model from an empty queue (a leftover reply would answer it)."""
    if "live" in request.fixturenames:
        request.getfixturevalue("live").fake.reset()


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def page(context: BrowserContext, watch: Watch) -> Iterator[Page]:
    """A logged-in page; after the test, no console error, CSP violation, dialog or canary."""
    p = context.new_page()
    watch.attach(p)
    yield p
    watch.check(p)


@pytest.fixture
def new_page(context: BrowserContext, watch: Watch):
    """More pages in the same context (a second tab), each watched the same way."""
    pages: list[Page] = []

    def make() -> Page:
        p = context.new_page()
        watch.attach(p)
        pages.append(p)
        return p

    yield make
    for p in pages:
        watch.check(p)


def goto(page: Page, path: str) -> None:
    """Open a page and wait until its view is up (the memory and skills code loads on demand)."""
    page.goto(path)
    expect(page.locator('#app[data-ready="1"]')).to_have_count(1)


def shoot(page: Page, name: str) -> None:
    """Save a screenshot under tests/browser/screenshots/ (git-ignored)."""
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)
