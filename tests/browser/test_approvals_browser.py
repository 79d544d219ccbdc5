"""The approval card in a real browser: once, session, always, deny; a reload; a timeout."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

# Until the dashboard and its browser fixtures are in this tree there is nothing to test.
pytest.importorskip("tests.browser.live")
pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import WATCH, Watch, shoot
from tests.browser.live import PASSWORD, LiveApp

TIMEOUT_SECONDS = 12


@pytest.fixture(scope="module")
def shell_live(tmp_path_factory) -> Iterator[LiveApp]:
    home = tmp_path_factory.mktemp("approvals") / "home"
    home.mkdir()
    app = LiveApp(
        home,
        extra_env={
            "HERMES_WEB_ENABLE_SHELL": "true",
            "HERMES_WEB_ENABLE_WRITE": "true",
            "HERMES_APPROVAL_TIMEOUT": str(TIMEOUT_SECONDS),
        },
    ).start()
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture
def shell_page(browser: Browser, shell_live: LiveApp, tmp_path) -> Iterator[Page]:
    shell_live.fake.reset()
    context: BrowserContext = browser.new_context(
        base_url=shell_live.url, viewport={"width": 1280, "height": 800}
    )
    context.add_init_script(WATCH)
    context.set_default_timeout(15_000)
    page = context.new_page()
    watch = Watch()
    watch.attach(page)
    page.goto("/login")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda u: "/login" not in u)
    yield page
    watch.check(page)
    context.close()


def send(page: Page, text: str) -> None:
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")


def new_chat(page: Page) -> None:
    page.goto("/")
    page.click("#new-chat")
    expect(page.locator("#chat-title")).to_have_text("New chat")


def last_answer(page: Page):
    return page.locator("#messages .msg-assistant").last


def test_once_session_always_and_deny_from_the_card(shell_page: Page, shell_live: LiveApp):
    page, fake, ws = shell_page, shell_live.fake, shell_live.workspace
    for name in ("one", "two", "three"):
        (ws / name).mkdir(exist_ok=True)
    new_chat(page)

    fake.reply(tool_calls=[("run_bash", {"command": "rm -rf one && echo removed-one"})])
    fake.reply(text="Removed one.")
    send(page, "remove one")
    card = page.locator(".approval-card")
    expect(card).to_have_count(1)
    expect(card.locator(".approval-input")).to_have_text("rm -rf one && echo removed-one")
    shoot(page, "approval-card")
    expect(card.locator(".approval-reason")).to_contain_text("deletes folders recursively")
    card.locator("button[data-decision=once]").click()
    expect(card.locator(".approval-status")).to_have_text("Approved once.")
    expect(last_answer(page)).to_contain_text("Removed one.", timeout=20_000)
    assert not (ws / "one").exists()

    fake.reply(tool_calls=[("run_bash", {"command": "rm -r two"})])
    fake.reply(text="Removed two.")
    send(page, "remove two")
    card = page.locator(".approval-card").last
    card.locator("button[data-decision=session]").click()
    expect(card.locator(".approval-status")).to_contain_text("rest of this session")
    expect(last_answer(page)).to_contain_text("Removed two.", timeout=20_000)

    fake.reply(tool_calls=[("run_bash", {"command": "rm -r three"})])
    fake.reply(text="Removed three.")
    send(page, "remove three")
    expect(last_answer(page)).to_contain_text("Removed three.", timeout=20_000)
    expect(page.locator(".approval-card")).to_have_count(2)  # not asked again this session
    assert not (ws / "three").exists()

    fake.reply(tool_calls=[("run_bash", {"command": "git reset --hard"})])
    fake.reply(text="Reset.")
    send(page, "reset")
    card = page.locator(".approval-card").last
    expect(card.locator(".approval-reason")).to_contain_text("uncommitted changes")
    card.locator("button[data-decision=always]").click()
    expect(card.locator(".approval-status")).to_contain_text("Approved always")
    expect(last_answer(page)).to_contain_text("Reset.", timeout=20_000)
    saved = json.loads((shell_live.home / "approvals.json").read_text())
    assert [g["rule"] for g in saved["always"]] == ["git-reset-hard"]

    (ws / "keep").mkdir(exist_ok=True)
    fake.reply(tool_calls=[("run_bash", {"command": "sudo rm -r keep"})])
    fake.reply(text="Left it.")
    send(page, "sudo it")
    card = page.locator(".approval-card").last
    expect(card.locator(".approval-reason")).to_contain_text("another user")
    card.locator("button[data-decision=deny]").click()
    expect(card.locator(".approval-status")).to_have_text("Denied.")
    expect(last_answer(page)).to_contain_text("Left it.", timeout=20_000)
    assert (ws / "keep").is_dir()
    told = json.dumps(fake.requests[-1].json["messages"])
    assert "denied by the user" in told


def test_a_waiting_turn_survives_a_reload_then_times_out_as_a_denial(
    shell_page: Page, shell_live: LiveApp
):
    page, fake, ws = shell_page, shell_live.fake, shell_live.workspace
    (ws / "precious").mkdir(exist_ok=True)
    # "New chat" summarizes the chat it leaves (a model call of its own): nothing to summarize.
    for session_id in shell_live.store.session_ids():
        shell_live.store.update_session(session_id, summary="seen")
    new_chat(page)
    fake.reply(tool_calls=[("run_bash", {"command": "rm -rf precious"})])
    fake.reply(text="Nobody said yes, so I stopped.")
    send(page, "delete precious")
    expect(page.locator(".approval-card")).to_have_count(1)
    page.reload()
    card = page.locator(".approval-card")
    expect(card).to_have_count(1, timeout=20_000)
    expect(card.locator(".approval-input")).to_have_text("rm -rf precious")
    expect(card.locator("button[data-decision=once]")).to_be_visible()
    # Nobody answers: the server's timeout denies it and the card says so.
    expect(card.locator(".approval-status")).to_contain_text(
        "No longer waiting", timeout=(TIMEOUT_SECONDS + 15) * 1000
    )
    expect(last_answer(page)).to_contain_text("Nobody said yes", timeout=20_000)
    assert (ws / "precious").is_dir()
    told = json.dumps(fake.requests[-1].json["messages"])
    assert "nobody approved it" in told
