"""What the dashboard's HTML carries besides the view: the first data, exactly as the API
answers it, in a data block no stored text can break out of; and static files gzipped."""

from __future__ import annotations

import gzip
import json
import re
import time
from pathlib import Path

from hermes.messages import Message
from web import pages

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "</script><script>window.hermesPwned=1</script><!-- \u2028"


def _boot(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="boot-data">(.*?)</script>', html, re.S)
    assert found, "no boot-data block in the page"
    return json.loads(found.group(1))


def test_a_session_page_carries_what_the_api_would_answer(api, app_store):
    sid = app_store.create_session(title=HOSTILE, source="web").id
    for i in range(45):
        app_store.add_message(sid, Message(role="user", content=f"{HOSTILE} {i}"))
    html = api.get(f"/sessions/{sid}").text
    # One closing tag for the block itself; none from the stored text.
    assert html.count("</script>") == html.count("<script")
    assert "window.hermesPwned" not in html.split('id="boot-data">')[0]
    boot = _boot(html)
    assert boot["chat"] == api.get(f"/api/sessions/{sid}?limit=40").get_json()
    assert boot["sessions"] == api.get("/api/sessions?limit=40").get_json()
    assert len(boot["chat"]["messages"]) == 40 and boot["chat"]["has_more"] is True
    assert boot["chat"]["messages"][-1]["content"] == f"{HOSTILE} 44"


def test_the_dashboard_carries_the_newest_session_and_other_views_only_the_list(api, app_store):
    assert _boot(api.get("/").text) == {"sessions": {"sessions": [], "next": None}}
    sid = app_store.create_session(title="newest", source="web").id
    assert _boot(api.get("/").text)["chat"]["session"]["id"] == sid
    for url in ("/memory?q=x", "/skills"):
        boot = _boot(api.get(url).text)
        assert set(boot) == {"sessions"} and boot["sessions"]["sessions"][0]["id"] == sid


def test_static_scripts_and_styles_go_out_gzipped_when_the_browser_accepts_it(api):
    raw = (ROOT / "static/js/main.js").read_bytes()
    zipped = api.get("/static/js/main.js", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert zipped.status_code == 200
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped.headers["Vary"]
    assert gzip.decompress(zipped.data) == raw
    assert int(zipped.headers["Content-Length"]) == len(zipped.data) < len(raw) / 2
    # The weak tag still revalidates: an unchanged file answers 304.
    etag = zipped.headers["ETag"]
    assert etag.startswith("W/")
    again = api.get(
        "/static/js/main.js", headers={"Accept-Encoding": "gzip", "If-None-Match": etag}
    )
    assert again.status_code == 304
    # Served again from memory, still whole.
    assert (
        gzip.decompress(api.get("/static/css/app.css", headers={"Accept-Encoding": "gzip"}).data)
        == (ROOT / "static/css/app.css").read_bytes()
    )
    plain = api.get("/static/js/main.js")
    assert "Content-Encoding" not in plain.headers and plain.data == raw


def test_pages_are_never_compressed(api):
    # A page holds the CSRF token next to text the address can vary (?q=): no size oracle.
    page = api.get("/memory?q=secret", headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in page.headers
    assert b"csrf-token" in page.data


def _asset_paths(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/static/v/[0-9a-f]+/[^"]+)"', html)


def test_the_page_addresses_its_files_by_version_and_they_are_cached_for_good(api):
    paths = _asset_paths(api.get("/").text)
    assert any(p.endswith("/js/main.js") for p in paths)
    assert any(p.endswith("/css/app.css") for p in paths)
    assert len({p.split("/")[3] for p in paths}) == 1  # one version for the whole graph
    response = api.get(paths[0])
    assert response.status_code == 200
    assert response.cache_control.max_age == 365 * 24 * 3600 and response.cache_control.immutable
    name = paths[0].split("/", 4)[4]
    assert response.data == (ROOT / "static" / name).read_bytes()
    # A page from before a deploy asks with its old version: today's file, never pinned.
    stale = api.get(f"/static/v/000000000000/{name}")
    assert stale.status_code == 200 and stale.cache_control.no_cache
    assert not stale.cache_control.immutable
    assert api.get("/static/v/000000000000/../web/pages.py").status_code == 404


def test_any_change_to_a_static_file_gives_new_addresses(app, api, tmp_path):
    import os
    import shutil

    copy = tmp_path / "static"
    shutil.copytree(ROOT / "static", copy)
    app.static_folder = str(copy)
    before = _asset_paths(api.get("/").text)
    os.utime(copy / "vendor" / "VERSIONS", ns=(1, 1))
    # The version is worked out once for a page's burst of requests, so a change shows within
    # ASSET_VERSION_TTL, not at once.
    time.sleep(pages.ASSET_VERSION_TTL + 0.05)
    after = _asset_paths(api.get("/").text)
    assert before != after and len(before) == len(after)
    assert api.get(after[0]).cache_control.immutable
    assert not api.get(before[0]).cache_control.immutable
