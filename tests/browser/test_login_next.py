"""Logging in from a bookmarked page lands on that page, in a real browser."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, expect

from tests.browser.live import PASSWORD, LiveApp


def test_login_from_a_bookmark_lands_on_the_bookmarked_page(browser: Browser, live: LiveApp):
    context = browser.new_context(base_url=live.url)
    page = context.new_page()
    page.goto("/memory?q=sourdough%20starter")
    expect(page).to_have_url(re.compile(r"/login\?next="))
    page.fill("#password", "wrong password")
    page.click("button[type=submit]")
    expect(page.locator(".error")).to_be_visible()  # a failed try keeps where it was going
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/memory\?q=sourdough%20starter$"))
    expect(page.locator('#app[data-ready="1"]')).to_have_count(1)
    context.close()
