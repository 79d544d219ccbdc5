"""The dashboard in a real browser: first-load bytes, main-thread time while streaming, and
opening a long session.

Runs the real app under gunicorn (the Procfile's command) against the scripted model server
and drives Debian's chromium through Playwright, exactly like tests/browser/. Prints:

- first load of the dashboard: bytes transferred, everything included (target <= 200 KB);
- a streamed answer of --tokens tokens: long tasks (> 50 ms) while it streams (target: none),
  and the markdown work of the incremental renderer next to a naive re-render per chunk;
- opening a --messages message session: time to its first paint (target < 500 ms), on a
  fresh page load (empty cache) and when switching to it from another session.

Timings are taken --runs times and printed as median and worst, each with the machine's load
average at that moment: on a shared machine a busy minute slows the browser and the server
alike. To tell the page's own change from the machine's noise, run another checkout (main's)
under the same browser in the same minute: --app-root /path/to/main serves that checkout's
app and pages instead of this one's (the figures' code stays this script's).

    python bench/bench_page.py [--tokens 2000] [--messages 2000] [--runs 5] [--app-root DIR]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright

from tests.browser.live import CHROMIUM, CHROMIUM_ARGS, PASSWORD, LiveApp

LONGTASKS = """
window.__long = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__long.push({start: e.startTime, duration: e.duration});
}).observe({type: 'longtask', buffered: true});
window.__painted = null;
new MutationObserver((_, obs) => {
  const list = document.getElementById('messages');
  if (list && list.querySelector('[data-id]') && window.__painted === null) {
    window.__painted = -1;
    requestAnimationFrame(() => setTimeout(() => { window.__painted = performance.now(); }, 0));
  }
}).observe(document, {childList: true, subtree: true});
"""


def answer_text(tokens: int) -> str:
    """About `tokens` tokens (~4 characters each) of mixed markdown."""
    parts, size, n = [], 0, 0
    while size < tokens * 4:
        n += 1
        block = [
            f"## Section {n}\n\nThis paragraph explains step {n} in some detail, with **bold** and `code`.",
            f"- item {n}.1 with a [link](https://example.com/{n})\n- item {n}.2\n- item {n}.3",
            f"```python\ndef step_{n}(x):\n    return x * {n}\n```",
            f"> A quoted note for section {n}, followed by a table:\n\n| a | b |\n|---|---|\n| {n} | {n * 2} |",
        ][n % 4]
        parts.append(block)
        size += len(block) + 2
    return "\n\n".join(parts)


def login(browser, url: str, state: Path) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + "/login")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda u: "/login" not in u)
    context.storage_state(path=str(state))
    context.close()


def first_load_bytes(browser, live: LiveApp, state: Path) -> tuple[int, dict[str, int]]:
    """Bytes on the wire (headers + bodies) for a cold load of the dashboard, by kind."""
    context = browser.new_context(storage_state=str(state), base_url=live.url)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    kinds: dict[str, str] = {}
    sizes: dict[str, int] = {}
    cdp.on("Network.responseReceived", lambda e: kinds.__setitem__(e["requestId"], e["type"]))
    cdp.on(
        "Network.loadingFinished",
        lambda e: sizes.__setitem__(e["requestId"], int(e["encodedDataLength"])),
    )
    page.goto("/")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    by_kind: dict[str, int] = {}
    for rid, size in sizes.items():
        kind = kinds.get(rid, "Other")
        by_kind[kind] = by_kind.get(kind, 0) + size
    context.close()
    return sum(sizes.values()), by_kind


def streaming(browser, live: LiveApp, state: Path, tokens: int) -> dict:
    text = answer_text(tokens)
    live.fake.reset()
    live.fake.reply(text=text, usage=(100, tokens))
    context = browser.new_context(storage_state=str(state), base_url=live.url)
    context.add_init_script(LONGTASKS)
    page = context.new_page()
    page.goto("/")
    page.click("#new-chat")
    page.wait_for_timeout(300)
    # Time each redraw of the streaming answer (the page's own work per frame).
    page.evaluate(
        """async () => {
          const md = await import(new URL('markdown.js', document.querySelector('script[type="module"]').src));
          const draw = md.StreamingMarkdown.prototype._draw;
          window.__draws = [];
          md.StreamingMarkdown.prototype._draw = function (final) {
            const t = performance.now();
            const caughtUp = draw.call(this, final);
            window.__draws.push(performance.now() - t);
            return caughtUp;
          };
        }"""
    )
    page.fill("#composer-input", "write the long answer")
    # The end is awaited inside the page (a MutationObserver), so no polling from Playwright
    # runs in the page while it streams; Enter goes in through CDP, not page scripts.
    page.evaluate(
        """() => {
          window.__streamed = new Promise((resolve) => {
            new MutationObserver((_, obs) => {
              if (document.querySelector('#messages .msg-assistant:not(.live)')) {
                obs.disconnect();
                resolve(performance.now());
              }
            }).observe(document.getElementById('messages'), {childList: true, subtree: true, attributes: true});
          });
        }"""
    )
    # A trace of the main thread's tasks gives each one's CPU time next to its wall time: on a
    # shared machine a task waits for a core too, and only the CPU part is the page's own work.
    cdp = context.new_cdp_session(page)
    trace: list[dict] = []
    traced = threading.Event()
    cdp.on("Tracing.dataCollected", lambda e: trace.extend(e["value"]))
    cdp.on("Tracing.tracingComplete", lambda e: traced.set())
    cdp.send("Tracing.start", {"categories": "toplevel", "transferMode": "ReportEvents"})
    start = page.evaluate("performance.now()")
    page.keyboard.press("Enter")
    end = page.evaluate("window.__streamed")
    cdp.send("Tracing.end")
    for _ in range(100):
        if traced.is_set():
            break
        page.wait_for_timeout(50)
    cpu_longest, cpu_over = main_thread_tasks(trace)
    longs = [t for t in page.evaluate("window.__long") if t["start"] >= start]
    draws = page.evaluate("window.__draws")
    # The renderer's own cost, in the page: incremental (what the page does) vs re-rendering
    # the whole answer on every chunk (what it avoids). Same text, same 8-character chunks.
    costs = page.evaluate(
        """async (text) => {
          const md = await import(new URL('markdown.js', document.querySelector('script[type="module"]').src));
          const chunks = text.match(/[\\s\\S]{1,8}/g);
          const box = document.createElement('div');
          document.body.append(box);
          let t = performance.now();
          const s = new md.StreamingMarkdown(box);
          for (const c of chunks) { s.text += c; while (!s._draw(false)); }
          while (!s._draw(true));
          const incremental = performance.now() - t;
          box.replaceChildren();
          t = performance.now();
          let acc = '';
          for (const c of chunks) { acc += c; box.replaceChildren(md.renderMarkdown(acc)); }
          const naive = performance.now() - t;
          box.remove();
          return {incremental, naive, chunks: chunks.length};
        }""",
        text,
    )
    context.close()
    return {
        "seconds": (end - start) / 1000,
        "long_tasks": len(longs),
        "longest": max((t["duration"] for t in longs), default=0.0),
        "draws": len(draws),
        "draw_max": max(draws, default=0.0),
        "draw_median": statistics.median(draws) if draws else 0.0,
        "tasks": [(round(t["start"] - start), round(t["duration"])) for t in longs],
        "cpu_longest": cpu_longest,
        "cpu_over": cpu_over,
        "chars": len(text),
        **costs,
    }


def main_thread_tasks(trace: list[dict]) -> tuple[float, int]:
    """The page's main-thread tasks in a trace: the longest one's CPU time (ms), and how many
    used over 50 ms of CPU. The trace covers only the stream (Tracing.start to Tracing.end)."""
    mains = {
        (e["pid"], e["tid"])
        for e in trace
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e["args"].get("name") == "CrRendererMain"
    }
    cpu = [
        e.get("tdur", 0) / 1000
        for e in trace
        if (e.get("pid"), e.get("tid")) in mains
        and e.get("ph") == "X"
        and e.get("name") == "ThreadControllerImpl::RunTask"
    ]
    return max(cpu, default=0.0), sum(1 for ms in cpu if ms > 50)


def open_long_session(browser, live: LiveApp, state: Path, session_id: int, other_id: int) -> dict:
    context = browser.new_context(storage_state=str(state), base_url=live.url)
    context.add_init_script(LONGTASKS)
    page = context.new_page()
    cold = painted_after_goto(page, f"/sessions/{session_id}")
    # Where the time went: the HTML's arrival and the last script's or style's (the server's
    # share), the rest is the browser's.
    html_at, files_at = page.evaluate(
        """() => [performance.getEntriesByType('navigation')[0].responseEnd,
                  Math.max(0, ...performance.getEntriesByType('resource')
                    .filter((r) => /\\.(js|css)$/.test(r.name)).map((r) => r.responseEnd))]"""
    )
    fcp = page.evaluate(
        "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null"
    )
    page.wait_for_selector('#app[data-ready="1"]')
    rows = page.locator("#messages > li[data-id]").count()
    # Switching from another session inside the page (no reload).
    page.goto(f"/sessions/{other_id}")
    page.wait_for_selector("#messages [data-id]")
    page.wait_for_selector(f'#session-list li[data-id="{session_id}"] a')
    switch = page.evaluate(
        """async (id) => {
          const link = document.querySelector('#session-list li[data-id="' + id + '"] a');
          const t = performance.now();
          link.click();
          await new Promise((resolve) => {
            const check = () => {
              const last = document.querySelector('#messages > li[data-id]:last-of-type');
              if (document.querySelectorAll('#messages > li[data-id]').length > 10 && last)
                requestAnimationFrame(() => setTimeout(resolve, 0));
              else requestAnimationFrame(check);
            };
            check();
          });
          return performance.now() - t;
        }""",
        str(session_id),
    )
    # The same address again in this browser (a bookmark, a new tab): its files are cached.
    page.goto("about:blank")
    warm = painted_after_goto(page, f"/sessions/{session_id}")
    context.close()
    return {
        "cold_paint": cold,
        "fcp": fcp,
        "switch": switch,
        "rows": rows,
        "warm_paint": warm,
        "html_at": html_at,
        "files_at": files_at,
    }


def painted_after_goto(page, url: str) -> float:
    """Load `url`; ms from navigation until its messages were painted (LONGTASKS' __painted)."""
    page.goto(url)
    # Awaited inside the page: Playwright's selector engine is not injected mid-load.
    return page.evaluate(
        """() => new Promise((resolve) => {
          const check = () => (window.__painted > 0 ? resolve(window.__painted) : setTimeout(check, 20));
          check();
        })"""
    )


def load() -> str:
    """The machine's load average now (1 and 5 minutes), for every figure printed."""
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f} on {os.cpu_count()} cores"


def spread(values: list[float], unit: str = "ms") -> str:
    """Median and worst of several runs."""
    return f"median {statistics.median(values):.0f} {unit}, worst {max(values):.0f} {unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--app-root", type=Path, default=None, help="serve another checkout (e.g. main's)"
    )
    args = parser.parse_args()

    # A timeout's SIGTERM still runs the finally below, so gunicorn is not left behind.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-page-")) / "home"
    home.mkdir()
    live = LiveApp(home, root=args.app_root).start()
    print(f"serving {live.root}  ({load()})")
    try:
        for n in range(30):
            live.seed_session(
                f"Earlier chat {n}", [("user", f"question {n}"), ("assistant", f"answer {n}")]
            )
        other = live.seed_session("A short one", [("user", "hi"), ("assistant", "hello")])
        long_id = live.seed_session(
            "Two thousand messages",
            [
                ("user" if i % 2 == 0 else "assistant", f"Message {i}: " + "some words " * 12)
                for i in range(args.messages)
            ],
        )
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            state = home.parent / "state.json"
            login(browser, live.url, state)

            total, by_kind = first_load_bytes(browser, live, state)
            kinds = ", ".join(f"{k} {v / 1024:.1f}" for k, v in sorted(by_kind.items()))
            print(
                f"first load of the dashboard      {total / 1024:6.1f} KB  (target <= 200 KB; "
                f"by kind, KB: {kinds})"
            )

            runs = []
            for _ in range(args.runs):
                r = streaming(browser, live, state, args.tokens)
                r["load"] = load()
                runs.append(r)
                print(
                    f"    streaming run: {r['long_tasks']} long tasks, longest {r['longest']:.0f} ms "
                    f"(CPU: longest task {r['cpu_longest']:.0f} ms, {r['cpu_over']} over 50 ms), "
                    f"{r['seconds']:.1f} s, {r['draws']} redraws (longest {r['draw_max']:.0f} ms)"
                    f"{'  ' + str(r['tasks']) if r['tasks'] else ''}  ({r['load']})"
                )
            worst = max(runs, key=lambda r: r["longest"])
            with_long = sum(1 for r in runs if r["long_tasks"])
            print(
                f"streaming {args.tokens} tokens ({worst['chars']} chars, {worst['chunks']} chunks): "
                f"long tasks > 50 ms in {with_long} of {args.runs} runs "
                f"({sum(r['long_tasks'] for r in runs)} in all); longest task per run "
                f"{spread([r['longest'] for r in runs])} (target: none over 50 ms); "
                f"{statistics.median(r['seconds'] for r in runs):.1f} s end to end  ({load()})"
            )
            print(
                f"    the same tasks by CPU time (the page's own work, without waiting for a core): "
                f"longest per run {spread([r['cpu_longest'] for r in runs])}; "
                f"tasks over 50 ms of CPU: {sum(r['cpu_over'] for r in runs)} in {args.runs} runs"
            )
            print(
                f"redraws while streaming          {statistics.median(r['draws'] for r in runs):.0f} "
                f"frames (for ~{worst['chunks']} chunks), median "
                f"{statistics.median(r['draw_median'] for r in runs):.1f} ms, "
                f"longest {max(r['draw_max'] for r in runs):.1f} ms"
            )
            inc = statistics.median(r["incremental"] for r in runs)
            naive = statistics.median(r["naive"] for r in runs)
            print(
                f"markdown work for that answer    incremental {inc:7.0f} ms   "
                f"naive re-render per chunk {naive:7.0f} ms   ({naive / max(inc, 0.1):.0f}x)"
            )

            opens = []
            for _ in range(args.runs):
                o = open_long_session(browser, live, state, long_id, other)
                o["load"] = load()
                opens.append(o)
                print(
                    f"    open run: cold first paint {o['cold_paint']:.0f} ms (FCP {o['fcp'] or 0:.0f} ms; "
                    f"HTML in at {o['html_at']:.0f} ms, last script/style at {o['files_at']:.0f} ms), "
                    f"cached {o['warm_paint']:.0f} ms, switch {o['switch']:.0f} ms  ({o['load']})"
                )
            print(
                f"open a {args.messages}-message session, cold page load (empty cache): first paint "
                f"{spread([o['cold_paint'] for o in opens])} from navigation (FCP "
                f"{spread([o['fcp'] or 0 for o in opens])}) (target < 500 ms)  ({load()})"
            )
            print(
                f"open a {args.messages}-message session, page load with its files cached: first paint "
                f"{spread([o['warm_paint'] for o in opens])} from navigation (target < 500 ms)  ({load()})"
            )
            print(
                f"open a {args.messages}-message session, switching from another session: "
                f"{spread([o['switch'] for o in opens])} (target < 500 ms); "
                f"{opens[0]['rows']} messages in the DOM  ({load()})"
            )
            browser.close()
    finally:
        live.stop()


if __name__ == "__main__":
    main()
