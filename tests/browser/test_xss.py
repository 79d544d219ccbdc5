"""Hostile text everywhere untrusted text is shown executes nothing.

The corpus goes into assistant text (live and reloaded), a tool's output, a skill body, a
session title, an imported conversation and a search snippet. The `page` fixture's watch
fails the test if the canary global was ever assigned, a dialog opened, the CSP was
violated or the console logged an error; each test also checks the DOM itself.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.conftest import goto
from tests.browser.live import LiveApp

CANARY = "window.hermesPwned=1"
CORPUS = [
    f"<script>{CANARY}</script>",
    f'<img src=x onerror="{CANARY}">',
    f"[markdown js link](javascript:{CANARY})",
    "[markdown data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuaGVybWVzUHduZWQ9MTwvc2NyaXB0Pg==)",
    f'<a href="javascript:{CANARY}">html js link</a>',
    f'<a href="jav&#x09;ascript:{CANARY}">entity tab trick</a>',
    f'<a href="data:text/html,<script>{CANARY}</script>">html data link</a>',
    f'<svg onload="{CANARY}"><circle r="1"/></svg>',
    f'<iframe src="javascript:{CANARY}"></iframe>',
    '<iframe srcdoc="<script>parent.hermesPwned=1</script>"></iframe>',
    f'<details open ontoggle="{CANARY}"><summary>x</summary></details>',
    f"<math><mtext><table><mglyph><style><img src=x onerror={CANARY}></style></mglyph></table></mtext></math>",
    f'![img trick](x" onerror="{CANARY})',
    f'<form action="javascript:{CANARY}"><button>go</button></form>',
    f'<object data="javascript:{CANARY}"></object><embed src="javascript:{CANARY}">',
    f'<meta http-equiv="refresh" content="0;url=javascript:{CANARY}">',
    '<base href="https://evil.example/">',
    "<style>body{display:none}</style>",
    '<div style="background:url(https://evil.example/t.gif)">styled</div>',
    '<img src="https://tracker.example/pixel.gif" alt="pixel html">',
    "![pixel](https://tracker.example/pixel.gif)",
    "[external link](https://example.com/ok)",
    '<video src="https://evil.example/v.mp4" poster="https://evil.example/p.png"></video>',
    f'<a href="https://example.com/ok" onclick="{CANARY}">html link with handler</a>',
    "<b>kept bold</b> and <sub>kept sub</sub>",
    "right-to-left \u202etxt.exe\u202c override and \u2066isolate\u2069",
    f"`<script>{CANARY}</script>` in code and ```\n<img src=x onerror={CANARY}>\n```",
]
TEXT = "xsscanary " + "\n\n".join(CORPUS)


def assert_inert(page: Page, scope: str) -> None:
    """The DOM under `scope` holds no live markup from the corpus."""
    found = page.evaluate(
        """scope => {
          const root = document.querySelector(scope);
          const bad = [];
          for (const el of root.querySelectorAll('*')) {
            for (const a of el.attributes) {
              if (a.name.startsWith('on')) bad.push(el.tagName + ' ' + a.name);
              if (a.name === 'style') bad.push(el.tagName + ' style');
              if (['href', 'src', 'action', 'data', 'formaction'].includes(a.name) &&
                  /^\\s*(javascript|data|vbscript):/i.test(a.value) && el.tagName !== 'IMG')
                bad.push(el.tagName + ' ' + a.name + '=' + a.value.slice(0, 30));
            }
            if (['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'STYLE', 'BASE', 'META', 'VIDEO'].includes(el.tagName)
                && !el.closest('head')) bad.push(el.tagName);
            if (el.tagName === 'FORM' && el.closest('.msg-body, .skill-body, .snippet')) bad.push('FORM');
            if (el.tagName === 'A' && el.target === '_blank' &&
                !(el.rel.includes('noopener') && el.rel.includes('noreferrer'))) bad.push('A without rel');
          }
          return bad;
        }""",
        scope,
    )
    assert found == [], found
    assert page.evaluate("window.hermesPwned") is None
    assert page.evaluate("document.querySelectorAll('base').length") == 0


def click_all_links(page: Page, scope: str) -> None:
    """Clicking every corpus link does nothing harmful (model links open in a new tab)."""
    links = page.locator(f"{scope} a:not([href^='/']):not([href^='#'])")
    for i in range(links.count()):
        link = links.nth(i)
        if link.get_attribute("href") is None:
            link.click()


def test_assistant_text_live_and_reloaded(page: Page, live: LiveApp):
    live.fake.reply(text=TEXT)
    goto(page, "/")
    page.click("#new-chat")
    page.fill("#composer-input", "show me hostile markup")
    page.keyboard.press("Enter")
    answer = page.locator("#messages .msg-assistant").last
    expect(answer).to_contain_text("override", timeout=20_000)
    expect(page.locator("#messages .msg-assistant.live")).to_have_count(0)
    assert_inert(page, "#messages")
    click_all_links(page, "#messages")
    # The tracking pixel became a link; the external link kept its href, safely; raw HTML
    # is text except plain formatting tags.
    expect(answer.locator("a", has_text="[image: pixel]")).to_have_count(1)
    expect(answer.locator("b", has_text="kept bold")).to_have_count(1)
    expect(answer).to_contain_text('<a href="javascript:')
    ext = answer.locator("a", has_text="external link")
    assert ext.get_attribute("href") == "https://example.com/ok"
    assert ext.get_attribute("rel") == "noopener noreferrer"
    page.reload()
    expect(page.locator("#messages .msg-assistant").last).to_contain_text("override")
    assert_inert(page, "#messages")


def test_tool_output(page: Page, live: LiveApp):
    (live.workspace / "hostile.txt").write_text(TEXT)
    live.fake.reply(tool_calls=[("read_file", {"path": "hostile.txt"})])
    live.fake.reply(text="I read it.")
    goto(page, "/")
    page.click("#new-chat")
    page.fill("#composer-input", "read hostile.txt")
    page.keyboard.press("Enter")
    expect(page.locator("#messages .msg-assistant").last).to_contain_text("I read it.")
    card = page.locator(".tool-card").last
    card.locator("summary").click()
    expect(card.locator(".tool-output")).to_contain_text("<script>")
    assert_inert(page, "#messages")
    page.reload()
    card = page.locator(".tool-card").last
    card.locator("summary").click()
    expect(card.locator(".tool-output")).to_contain_text("onerror")
    assert_inert(page, "#messages")


def test_skill_body(page: Page, live: LiveApp):
    goto(page, "/skills")
    token = page.locator('meta[name="csrf-token"]').get_attribute("content")
    response = page.request.post(
        "/api/skills",
        data={
            "name": "hostile-skill",
            "description": "A skill whose body is hostile; use when testing.",
            "body": TEXT,
            "triggers": ["xss"],
        },
        headers={"X-CSRF-Token": token},
    )
    assert response.status == 201, response.text()
    goto(page, "/skills/hostile-skill")
    expect(page.locator("#skill-detail .skill-body")).to_contain_text("override")
    assert_inert(page, "#skill-detail")
    click_all_links(page, "#skill-detail")
    page.locator("#skill-detail").get_by_role("button", name="Edit").click()
    expect(page.locator("#skill-field-body")).to_have_value(TEXT)
    assert_inert(page, "#skill-detail")


def test_session_title_imported_messages_and_search_snippets(page: Page, live: LiveApp):
    title = f'<img src=x onerror="{CANARY}">\u202etitle'
    sid = live.seed_session(
        title,
        [("user", "importedcanary " + TEXT), ("assistant", "importedcanary " + TEXT)],
    )
    goto(page, f"/sessions/{sid}")
    expect(page.locator("#chat-title")).to_have_text(title)
    expect(page.locator(f'#session-list li[data-id="{sid}"] .session-title')).to_have_text(title)
    expect(page.locator("#messages .msg-user .msg-body")).to_contain_text("<script>")
    assert_inert(page, "#app")
    click_all_links(page, "#messages")
    goto(page, "/memory?q=importedcanary")
    # The messages holding the word lead (search by meaning may add other hostile ones).
    hits = page.locator(".hit")
    expect(hits.first).to_be_visible()
    expect(hits.first.locator(".hit-title")).to_have_text(title)
    assert hits.first.locator(".snippet mark").count() >= 1
    # Everything in the snippet besides <mark> is text.
    tags = page.evaluate("[...document.querySelectorAll('.snippet *')].map(e => e.tagName)")
    assert set(tags) <= {"MARK"}, tags
    assert_inert(page, "#app")
