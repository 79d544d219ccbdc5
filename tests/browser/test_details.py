"""Smaller promises of the page: compaction markers and the session's cost from the API, long
tool output folded, unknown stream events ignored, and the hook the approvals card uses."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import goto
from tests.browser.live import LiveApp


def test_compaction_marker_and_session_usage_when_the_api_gives_them(page: Page, live: LiveApp):
    sid = live.seed_session("Compacted", [("user", f"m{i}") for i in range(6)])
    ids = live.message_ids(sid)

    def add_fields(route: Route) -> None:
        response = route.fetch()
        data = response.json()
        data["session"]["usage"] = {
            "input_tokens": 12000,
            "output_tokens": 3400,
            "cost_usd": 0.4321,
        }
        data["session"]["compactions"] = [
            {"id": 1, "through_message_id": ids[2], "created_at": "2026-01-01T00:00:00Z"}
        ]
        route.fulfill(response=response, body=json.dumps(data))

    page.route(re.compile(rf"/api/sessions/{sid}\?"), add_fields)
    # Opened from the sidebar, so the page asks the API (a cold load of /sessions/<id> reads
    # the same JSON from the HTML instead).
    other = live.seed_session("Another", [("user", "hello")])
    goto(page, f"/sessions/{other}")
    page.locator(f'#session-list li[data-id="{sid}"] a').click()
    marker = page.locator(".compaction-marker")
    expect(marker).to_have_text("earlier messages summarized")
    # Right after the message it summarizes through.
    assert marker.evaluate("m => m.previousElementSibling.id") == f"m{ids[2]}"
    expect(page.locator("#session-cost")).to_have_text("$0.43")
    expect(page.locator("#chat-usage")).to_contain_text("12.0k in · 3400 out")


def test_long_tool_output_is_folded_until_asked(page: Page, live: LiveApp):
    (live.workspace / "big.txt").write_text(
        "".join(f"row {i} " + "x" * 60 + "\n" for i in range(120))
    )
    live.fake.reply(tool_calls=[("read_file", {"path": "big.txt"})])
    live.fake.reply(text="A big file.")
    goto(page, "/")
    page.click("#new-chat")
    page.fill("#composer-input", "read big.txt")
    page.keyboard.press("Enter")
    expect(page.locator("#messages .msg-assistant").last).to_contain_text("A big file.")
    card = page.locator(".tool-card").last
    card.locator("summary").click()
    output = card.locator(".tool-output")
    assert "row 119 " not in output.inner_text()
    card.get_by_role("button", name=re.compile(r"Show all")).click()
    expect(output).to_contain_text("row 119 ")


def test_unknown_events_are_ignored_and_hooks_receive_their_type(page: Page, live: LiveApp):
    live.fake.reply(text="Answer despite strange events.")
    goto(page, "/")
    page.click("#new-chat")
    # Register a hook the way static/js/approvals.js would, for a made-up event type.
    page.evaluate(
        """async () => {
          const { eventHooks } = await import(new URL('turnview.js', document.querySelector('script[type="module"]').src));
          window.__hooked = [];
          eventHooks.set('future_card', (ev, ctx) => window.__hooked.push([ev.type, Boolean(ctx.row)]));
        }"""
    )

    def inject(route: Route) -> None:
        response = route.fetch()
        lines = response.text().splitlines()
        extra = [
            json.dumps({"type": "something_new", "turn_id": "x", "payload": "<b>x</b>"}),
            json.dumps({"type": "future_card", "turn_id": "x"}),
            "not json at all",
        ]
        route.fulfill(response=response, body="\n".join(lines[:1] + extra + lines[1:]) + "\n")

    page.route(re.compile(r"/api/sessions/\d+/turns$"), inject)
    page.fill("#composer-input", "hello")
    page.keyboard.press("Enter")
    expect(page.locator("#messages .msg-assistant").last).to_contain_text(
        "Answer despite strange events."
    )
    assert page.evaluate("window.__hooked") == [["future_card", True]]
    expect(page.locator(".inline-error")).to_have_count(0)
