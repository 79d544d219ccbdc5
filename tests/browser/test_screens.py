"""Every main view at desktop and phone width, light and dark (screenshots saved under
tests/browser/screenshots/), plus keyboard use, the phone drawer and screen-reader basics."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import WATCH, Watch, goto, shoot
from tests.browser.live import LiveApp

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def showcase(live: LiveApp) -> dict:
    """A session with markdown, code, a tool card and a search hit; a skill; a profile."""
    from hermes.events import ToolCall
    from hermes.messages import Message

    sid = live.seed_session(
        "Tidy the downloads folder",
        [
            Message(role="user", content="Please tidy my downloads folder."),
            Message(
                role="assistant",
                content="Let me look first.",
                tool_calls=(ToolCall(id="t1", name="list_dir", input={"path": "Downloads"}),),
            ),
            Message(
                role="tool", content="a.png\nb.pdf\nc.zip", tool_call_id="t1", tool_name="list_dir"
            ),
            Message(
                role="assistant",
                content="Done. I moved **3 files**:\n\n```sh\nmv a.png Pictures/\n```\n\n- images → Pictures\n- documents → Documents",
            ),
        ],
    )
    folder = live.home / "skills" / "tidy-downloads-demo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        "---\nname: tidy-downloads-demo\ndescription: Sort a downloads folder by file type. "
        "Use when asked to tidy or organise downloads.\nmetadata:\n  triggers: downloads, tidy\n"
        "  version: '2'\n  created-by: agent\n---\n\n# Tidy downloads\n\n1. List the folder.\n"
        "2. Move images to `Pictures/`, documents to `Documents/`.\n3. Report what moved.\n"
    )
    return {"session": sid}


def views(showcase: dict) -> dict[str, str]:
    return {
        "chat": f"/sessions/{showcase['session']}",
        "memory": "/memory?q=downloads",
        "profile": "/memory#profile",
        "skills": "/skills/tidy-downloads-demo",
    }


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_screenshots_of_every_view(
    browser: Browser, auth_state, live: LiveApp, showcase, size, scheme
):
    context = browser.new_context(
        storage_state=auth_state, base_url=live.url, viewport=SIZES[size], color_scheme=scheme
    )
    context.add_init_script(WATCH)
    page = context.new_page()
    watch = Watch()
    watch.attach(page)
    for name, path in views(showcase).items():
        goto(page, path)
        ready = {
            "chat": "#messages .tool-card",
            "memory": ".hit",
            "profile": "#profile-user",
            "skills": "#skill-detail .skill-body",
        }[name]
        expect(page.locator(ready).first).to_be_visible()
        shoot(page, f"{name}-{size}-{scheme}")
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (bg == "rgb(22, 24, 28)") == (scheme == "dark"), bg
    watch.check(page)
    context.close()


def test_phone_width_sidebar_is_a_drawer(browser: Browser, auth_state, live: LiveApp, showcase):
    context = browser.new_context(
        storage_state=auth_state, base_url=live.url, viewport=SIZES["phone"]
    )
    page = context.new_page()
    goto(page, f"/sessions/{showcase['session']}")
    sidebar = page.locator("#sidebar")
    expect(sidebar).not_to_be_in_viewport()
    toggle = page.locator("#drawer-toggle")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(sidebar).to_be_in_viewport()
    expect(page.locator("#new-chat")).to_be_focused()
    shoot(page, "drawer-phone-light")
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_be_focused()
    toggle.click()
    page.locator("#session-list a.session-link").first.click()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    context.close()


def test_keyboard_shortcuts_and_focus(page: Page, live: LiveApp, showcase):
    goto(page, f"/sessions/{showcase['session']}")
    expect(page.locator("#messages .tool-card")).to_be_visible()
    page.locator("body").press("?")
    dialog = page.locator("#shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("New chat")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    page.locator("body").press("/")
    expect(page).to_have_url(re.compile(r"/memory"))
    expect(page.locator("#search-q")).to_be_focused()
    page.keyboard.press("Alt+n")
    expect(page.locator("#chat-title")).to_have_text("New chat")
    expect(page.locator("#composer-input")).to_be_focused()
    # Tab reaches controls with a visible focus ring.
    page.keyboard.press("Shift+Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"


def test_landmarks_labels_and_live_region(page: Page, live: LiveApp, showcase):
    goto(page, f"/sessions/{showcase['session']}")
    expect(page.locator("#messages .tool-card")).to_be_visible()
    for role in ["banner", "navigation", "main", "complementary", "log", "status"]:
        assert page.get_by_role(role).count() >= 1, role
    unlabeled = page.evaluate(
        """[...document.querySelectorAll('button, a[href], input, textarea, select')]
           .filter(e => e.offsetParent !== null || e.type === 'file')
           .filter(e => !(e.getAttribute('aria-label') || e.textContent.trim() ||
                          (e.id && document.querySelector('label[for="' + e.id + '"]')) || e.title))
           .map(e => e.outerHTML.slice(0, 80))"""
    )
    assert unlabeled == []
    assert page.locator("#live-status").get_attribute("aria-live") == "polite"
