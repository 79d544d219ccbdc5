"""Chat in a real browser against the real app: log in, stream, tools, stop, resume, queue, retry."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import goto
from tests.browser.live import PASSWORD, LiveApp

LONG = (
    "First paragraph of a long answer that streams in slowly. " * 3
    + "\n\nSecond paragraph ends it."
)


def send(page: Page, text: str) -> None:
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")


def new_chat(page: Page) -> None:
    goto(page, "/")
    page.click("#new-chat")
    expect(page.locator("#chat-title")).to_have_text("New chat")


def session_id(page: Page) -> int:
    return int(re.search(r"/sessions/(\d+)", page.url).group(1))


def answers(page: Page):
    return page.locator("#messages .msg-assistant")


def test_login_rejects_a_wrong_password_then_logs_in_and_out(browser: Browser, live: LiveApp):
    context = browser.new_context(base_url=live.url)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login"))
    page.fill("#password", "wrong password")
    page.click("button[type=submit]")
    expect(page.locator(".error")).to_be_visible()
    expect(page.locator("#password")).to_have_attribute("aria-invalid", "true")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("#composer-input")).to_be_visible()
    page.wait_for_load_state("networkidle")
    page.click(".logout-form button")
    expect(page).to_have_url(re.compile(r"/login"))
    page.goto("/skills")
    expect(page).to_have_url(re.compile(r"/login"))
    # Only the expected 4xx answer to the wrong password may show in the console.
    assert all("status of 4" in e for e in errors), errors
    context.close()


def test_an_answer_streams_in_with_its_tool_card_and_usage(page: Page, live: LiveApp):
    live.fake.reply(text="Let me look.", tool_calls=[("list_dir", {"path": "."})], usage=(120, 30))
    live.fake.reply(
        text="**Streaming** works.\n\n" + LONG, stall=2.0, stall_after=6, usage=(200, 80)
    )
    new_chat(page)
    send(page, "what is in my folder?")
    card = page.locator(".tool-card").first
    expect(card.locator(".tool-name")).to_have_text("list_dir")
    # Text arrives before the answer is complete: a live row with partial text.
    live_row = page.locator(".msg-assistant.live")
    expect(live_row).to_contain_text("Streaming", timeout=10_000)
    assert "Second paragraph" not in live_row.inner_text()
    expect(answers(page).last).to_contain_text("Second paragraph ends it.", timeout=20_000)
    expect(page.locator(".msg-assistant.live")).to_have_count(0)
    expect(answers(page).last.locator("strong")).to_have_text("Streaming")
    # The card's body is built when it is opened, with the input and the result.
    assert card.locator(".tool-body").count() == 0
    card.locator("summary").click()
    expect(card.locator(".tool-input")).to_contain_text('"path": "."')
    expect(card.locator(".tool-output")).to_be_visible()
    expect(answers(page).last.locator(".usage-line")).to_contain_text("320 in · 110 out")
    expect(page.locator("#chat-usage")).to_contain_text("320 in")
    expect(page).to_have_url(re.compile(r"/sessions/\d+$"))
    # The sidebar lists the new session, current.
    expect(page.locator("#session-list li.active")).to_have_count(1)


def test_a_failed_tool_is_marked_as_an_error(page: Page, live: LiveApp):
    live.fake.reply(tool_calls=[("read_file", {"path": "does-not-exist.txt"})])
    live.fake.reply(text="That file is missing.")
    new_chat(page)
    send(page, "read it")
    card = page.locator(".tool-card.error")
    expect(card).to_have_count(1, timeout=15_000)
    expect(card.locator(".tool-status")).to_contain_text("error")
    card.locator("summary").click()
    expect(card.locator(".tool-output.error")).to_be_visible()


def test_stop_ends_a_running_turn(page: Page, live: LiveApp):
    live.fake.reply(
        text="This answer will be stopped before it ends. " * 5, stall=30, stall_after=5
    )
    new_chat(page)
    send(page, "write a lot")
    expect(page.locator(".msg-assistant.live")).to_contain_text("This answer", timeout=10_000)
    expect(page.locator("#stop-btn")).to_be_visible()
    page.click("#stop-btn")
    expect(page.locator(".stop-note")).to_have_text("Stopped.", timeout=20_000)
    expect(page.locator("#stop-btn")).to_be_hidden()


def test_a_reload_mid_turn_picks_the_turn_back_up(page: Page, live: LiveApp):
    live.fake.reply(text="Alpha beta gamma. " * 4 + "Omega.", stall=3, stall_after=6)
    new_chat(page)
    send(page, "count slowly")
    expect(page.locator(".msg-assistant.live")).to_contain_text("Alpha", timeout=10_000)
    url = page.url
    page.reload()
    assert page.url == url
    # Resumed through events?after=: the same text, shown once, then the end.
    expect(answers(page).last).to_contain_text("Omega.", timeout=20_000)
    expect(answers(page)).to_have_count(1)
    assert answers(page).last.inner_text().count("Alpha") == 4


def test_a_second_tab_follows_the_running_turn(page: Page, new_page, live: LiveApp):
    live.fake.reply(text="Shared between tabs. " * 3 + "The end.", stall=3, stall_after=6)
    new_chat(page)
    send(page, "tab test")
    expect(page.locator(".msg-assistant.live")).to_contain_text("Shared", timeout=10_000)
    other = new_page()
    goto(other, page.url)
    expect(other.locator(".msg-assistant").last).to_contain_text("The end.", timeout=20_000)
    expect(answers(page).last).to_contain_text("The end.", timeout=20_000)


def test_a_stream_cut_before_done_resumes_by_itself(page: Page, live: LiveApp):
    # The server cuts streams after 4 s (HERMES_WEB_STREAM_MAX_SECONDS in conftest); this
    # answer takes longer, so the page must reconnect with events?after= on its own.
    live.fake.reply(text="Before the cut. " * 2, stall=6, stall_after=5)
    new_chat(page)
    send(page, "slow one")
    expect(answers(page).last).to_contain_text("Before the cut.", timeout=20_000)
    expect(page.locator(".msg-assistant.live")).to_have_count(0, timeout=20_000)
    expect(page.locator(".inline-error")).to_have_count(0)
    assert answers(page).last.inner_text().count("Before the cut.") == 2


def test_messages_typed_during_a_turn_wait_and_are_sent_after(page: Page, live: LiveApp):
    live.fake.reply(text="Working on the first. " * 3, stall=2, stall_after=6)
    live.fake.reply(text="Second answer here.")
    new_chat(page)
    send(page, "first")
    expect(page.locator(".msg-assistant.live")).to_be_visible(timeout=10_000)
    send(page, "second")
    expect(page.locator("#queued")).to_contain_text("1 waiting")
    expect(answers(page).last).to_contain_text("Second answer here.", timeout=20_000)
    live.settle_summary(page, session_id(page))
    users = page.locator("#messages .msg-user .msg-body")
    expect(users).to_have_text(["first", "second"])
    expect(page.locator("#queued")).to_be_hidden()


def test_shift_enter_adds_a_line_and_enter_sends(page: Page, live: LiveApp):
    live.fake.reply(text="Two lines received.")
    new_chat(page)
    page.fill("#composer-input", "line one")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("line two")
    assert page.input_value("#composer-input") == "line one\nline two"
    page.keyboard.press("Enter")
    expect(page.locator("#messages .msg-user .msg-body").last).to_have_text("line one\nline two")
    expect(answers(page).last).to_contain_text("Two lines received.")


def test_a_model_error_shows_inline_with_a_retry_that_works(page: Page, live: LiveApp):
    live.fake.error(400, message="fake provider says no")
    live.fake.reply(text="Worked on retry.")
    new_chat(page)
    send(page, "try me")
    error = page.locator(".inline-error")
    expect(error).to_be_visible(timeout=15_000)
    error.locator("button.retry").click()
    expect(answers(page).last).to_contain_text("Worked on retry.", timeout=15_000)
    live.settle_summary(page, session_id(page))


def test_copy_buttons_copy_code_and_whole_answers(page: Page, context, live: LiveApp):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    live.fake.reply(text="Run this:\n\n```sh\necho hello\n```\n")
    new_chat(page)
    send(page, "give me code")
    answer = answers(page).last
    expect(answer.locator("pre code")).to_have_text("echo hello\n", timeout=15_000)
    answer.locator("button.copy-code").click()
    assert page.evaluate("navigator.clipboard.readText()") == "echo hello\n"
    answer.locator("button.copy-answer").click()
    assert page.evaluate("navigator.clipboard.readText()").startswith("Run this:")
    # Timestamps sit on every message, full date on hover.
    assert answer.locator("time").get_attribute("title")
