"""The streaming renderer in the real page: whatever the chunks and however small its frame
budget, the finished answer is exactly what rendering the whole text once gives; an open code
fence is shown as plain text while it streams; nothing hostile in it runs."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.browser.conftest import goto

ANSWER = (
    "## Steps\n\nFirst **bold**, then `code` and a [link](https://example.com).\n\n"
    "- one\n- two\n\n  still two\n- three\n\n"
    "```python\n"
    + "".join(f"print({i})  # <img src=x onerror=hermesPwned=1>\n" for i in range(60))
    + "```\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted <script>hermesPwned=1</script>\n\nThe end."
)

DRIVE = """async ({text, size, budget}) => {
  const md = await import(new URL('markdown.js', document.querySelector('script[type="module"]').src));
  const box = document.createElement('div');
  document.body.append(box);
  const s = new md.StreamingMarkdown(box);
  const seen = [];
  for (let i = 0; i < text.length; i += size) {
    s.text += text.slice(i, i + size);
    s.budget = budget;
    while (!s._draw(false));
    const pre = s.live.querySelector('pre.streaming-code > code');
    if (pre) seen.push(pre.textContent.length);
  }
  while (!s._draw(true));
  s._seal();
  const whole = document.createElement('div');
  whole.append(md.renderMarkdown(text));
  md.addCodeCopyButtons(whole);
  const out = {same: box.innerHTML === whole.innerHTML, streamedFence: seen.length, html: box.innerHTML};
  box.remove();
  return out;
}"""


def test_streamed_markdown_ends_as_the_whole_render_whatever_the_chunks(page: Page):
    goto(page, "/")
    for size, budget in ((1, 120), (7, 120), (64, 600), (4096, 4000)):
        out = page.evaluate(DRIVE, {"text": ANSWER, "size": size, "budget": budget})
        assert out["same"], (size, budget, out["html"][:500])
    # While the fence was open it was drawn as text (cheap), not re-rendered as markdown.
    assert page.evaluate(DRIVE, {"text": ANSWER, "size": 16, "budget": 120})["streamedFence"] > 10
    assert page.evaluate("window.__xssHits") == 0
