"""The sidebar and long sessions: rename, delete, bookmarks, a 2,000-message session."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import goto
from tests.browser.live import LiveApp

DOM_CAP = 240  # transcript.js MAX_IN_DOM


def rows(page: Page):
    return page.locator("#messages > li[data-id]")


def test_rename_in_place_and_delete_with_confirmation(page: Page, live: LiveApp):
    keep = live.seed_session("Keep me", [("user", "hello"), ("assistant", "hi")])
    doomed = live.seed_session("Delete me", [("user", "bye"), ("assistant", "ok")])
    goto(page, f"/sessions/{keep}")
    item = page.locator(f'#session-list li[data-id="{keep}"]')
    expect(item).to_have_class(re.compile("active"))
    item.hover()
    item.get_by_role("button", name="Rename Keep me").click()
    field = page.locator(".rename-input")
    expect(field).to_be_focused()
    field.fill("Renamed in place")
    field.press("Enter")
    expect(item.locator(".session-title")).to_have_text("Renamed in place")
    expect(page.locator("#chat-title")).to_have_text("Renamed in place")
    # Escape cancels a rename.
    item.get_by_role("button", name="Rename Renamed in place").click()
    page.locator(".rename-input").fill("Not this")
    page.locator(".rename-input").press("Escape")
    expect(item.locator(".session-title")).to_have_text("Renamed in place")

    other = page.locator(f'#session-list li[data-id="{doomed}"]')
    other.hover()
    other.get_by_role("button", name="Delete Delete me").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(other).to_have_count(1)
    other.get_by_role("button", name="Delete Delete me").click()
    dialog.get_by_role("button", name="Delete").click()
    expect(other).to_have_count(0)

    page.reload()
    expect(page.locator(f'#session-list li[data-id="{keep}"] .session-title')).to_have_text(
        "Renamed in place"
    )
    expect(page.locator(f'#session-list li[data-id="{doomed}"]')).to_have_count(0)
    assert page.request.get(f"/api/sessions/{doomed}").status == 404


def test_new_chat_button_and_session_links(page: Page, live: LiveApp):
    first = live.seed_session("First of two", [("user", "one"), ("assistant", "answer one")])
    goto(page, f"/sessions/{first}")
    expect(page.locator("#messages")).to_contain_text("answer one")
    page.click("#new-chat")
    expect(page.locator("#chat-title")).to_have_text("New chat")
    expect(rows(page)).to_have_count(0)
    page.locator(f'#session-list li[data-id="{first}"] a').click()
    expect(page).to_have_url(re.compile(rf"/sessions/{first}$"))
    expect(page.locator("#messages")).to_contain_text("answer one")
    page.go_back()
    expect(page.locator("#chat-title")).to_have_text("New chat")


def test_the_sidebar_pages_in_more_sessions_as_it_scrolls(page: Page, live: LiveApp):
    for n in range(60):
        live.seed_session(f"Paged session {n:02d}", [("user", f"q{n}")])
    goto(page, "/")
    items = page.locator("#session-list li[data-id]")
    expect(items.first).to_be_visible()
    before = items.count()
    page.locator("#session-list li.sentinel").scroll_into_view_if_needed()
    expect(page.get_by_text("Paged session 00")).to_have_count(1)
    assert items.count() > before


def test_a_long_session_opens_at_its_end_and_pages_up_in_a_bounded_dom(page: Page, live: LiveApp):
    messages = [("user" if i % 2 == 0 else "assistant", f"message number {i}") for i in range(2000)]
    sid = live.seed_session("Two thousand", messages)
    goto(page, f"/sessions/{sid}")
    expect(rows(page).last).to_contain_text("message number 1999")
    assert rows(page).count() <= 100
    transcript = page.locator("#transcript")
    # Scroll up until the first message is there; the DOM never holds the whole session.
    for _ in range(40):
        if page.get_by_text("message number 0", exact=True).count():
            break
        transcript.evaluate("t => { t.scrollTop = 0; t.dispatchEvent(new Event('scroll')); }")
        page.wait_for_timeout(150)
        assert rows(page).count() <= DOM_CAP
    expect(page.get_by_text("message number 0", exact=True)).to_have_count(1)
    assert rows(page).count() <= DOM_CAP
    expect(page.locator("#load-older")).to_be_hidden()
    # Jump to latest brings the end back.
    expect(page.locator("#jump-latest")).to_be_visible()
    page.click("#jump-latest")
    expect(rows(page).last).to_contain_text("message number 1999")


def test_a_bookmarked_message_opens_scrolled_to_and_highlighted(page: Page, live: LiveApp):
    messages = [("user" if i % 2 == 0 else "assistant", f"line {i}") for i in range(600)]
    sid = live.seed_session("Bookmarks", messages)
    target = live.message_ids(sid)[250]
    goto(page, f"/sessions/{sid}#m{target}")
    row = page.locator(f"#m{target}")
    expect(row).to_have_class(re.compile("highlight"))
    expect(row).to_contain_text("line 250")
    expect(row).to_be_in_viewport()
    # Scrolling down pages the newer messages back in.
    transcript = page.locator("#transcript")
    for _ in range(30):
        if page.get_by_text("line 599", exact=True).count():
            break
        transcript.evaluate(
            "t => { t.scrollTop = t.scrollHeight; t.dispatchEvent(new Event('scroll')); }"
        )
        page.wait_for_timeout(150)
    expect(page.get_by_text("line 599", exact=True)).to_have_count(1)


def test_a_cold_load_paints_from_the_html_and_keeps_tool_results_with_their_calls(
    page: Page, live: LiveApp
):
    """The first page of messages and of sessions rides in the HTML: no API request before
    the view is up, the whole first page in order, and a tool result whose call sits right
    at the cut between the first screenful and the rest still lands in its card."""
    from hermes.events import ToolCall
    from hermes.messages import Message

    messages = [Message(role="user", content=f"early {i}") for i in range(20)]
    # Many results for one call, so the cut before the last 12 falls among them.
    calls = tuple(ToolCall(id=f"c{i}", name="list_dir", input={"path": f"d{i}"}) for i in range(8))
    messages.append(Message(role="assistant", content="Looking.", tool_calls=calls))
    messages += [
        Message(role="tool", content=f"result {i}", tool_call_id=f"c{i}", tool_name="list_dir")
        for i in range(8)
    ]
    messages += [Message(role="assistant", content=f"**late** {i}") for i in range(10)]
    sid = live.seed_session("Cold </script><b>load</b>", messages)
    asked: list[str] = []
    page.on("request", lambda r: "/api/" in r.url and asked.append(r.url))
    goto(page, f"/sessions/{sid}")
    assert asked == [], asked
    expect(page.locator("#chat-title")).to_have_text("Cold </script><b>load</b>")
    expect(page.locator(f'#session-list li[data-id="{sid}"]')).to_have_class(re.compile("active"))
    texts = rows(page).evaluate_all(
        "rs => rs.map(r => r.querySelector('.msg-body').textContent.trim())"
    )
    assert texts[0] == "early 0" and texts[-1] == "late 9", texts
    ids = rows(page).evaluate_all("rs => rs.map(r => Number(r.dataset.id))")
    assert ids == sorted(ids) and len(ids) == 31  # 20 + 1 + 10 rows; the 8 results sit in cards
    cards = page.locator(".tool-card")
    expect(cards).to_have_count(8)
    expect(page.locator(".orphan-result, .msg-tool")).to_have_count(0)
    for i in (0, 7):
        cards.nth(i).locator("summary").click()
        expect(cards.nth(i)).to_contain_text(f"result {i}")
