"""The skills view: list, search, sort, create, edit with errors in place, history, restore,
import, export, delete."""

from __future__ import annotations

import re
import zipfile

from playwright.sync_api import Page, expect

from tests.browser.conftest import goto
from tests.browser.live import LiveApp


def create_in_ui(page: Page, name: str, description: str, body: str, triggers: str = "") -> None:
    goto(page, "/skills")
    page.click("#skill-new")
    page.fill("#skill-field-name", name)
    page.fill("#skill-field-description", description)
    page.fill("#skill-field-triggers", triggers)
    page.fill("#skill-field-body", body)
    page.get_by_role("button", name="Create skill").click()
    expect(page).to_have_url(re.compile(rf"/skills/{name}$"))
    expect(page.locator("#skill-detail h2")).to_have_text(name)


def test_create_edit_see_the_diff_and_restore_an_earlier_version(page: Page, live: LiveApp):
    create_in_ui(
        page,
        "tidy-downloads",
        "Sort the downloads folder by type. Use when asked to tidy downloads.",
        "1. List the folder.\n2. Move **images** to Pictures.",
        "downloads, tidy",
    )
    detail = page.locator("#skill-detail")
    expect(detail.locator(".skill-body strong")).to_have_text("images")
    expect(detail.locator(".skill-facts")).to_contain_text("downloads, tidy")

    detail.get_by_role("button", name="Edit").click()
    expect(page.locator("#skill-field-description")).to_be_focused()
    page.fill(
        "#skill-field-body", "1. List the folder.\n2. Move images to Pictures.\n3. Empty the trash."
    )
    page.get_by_role("button", name="Save new version").click()
    expect(detail.locator(".skill-facts")).to_contain_text("2")
    expect(detail.locator(".skill-body")).to_contain_text("Empty the trash.")

    detail.get_by_role("button", name="History").click()
    history = detail.locator(".skill-history")
    expect(history.locator(".versions li")).to_have_count(2)
    expect(history.locator(".diff .add")).to_contain_text(["Empty the trash."])
    history.get_by_role("button", name="Restore v1").click()
    page.locator("#confirm").get_by_role("button", name="Restore").click()
    expect(detail.locator(".skill-body")).not_to_contain_text("Empty the trash.")
    expect(detail.locator(".skill-facts dd").first).to_have_text("3")


def test_validation_errors_show_next_to_their_field(page: Page, live: LiveApp, watch):
    watch.allow_http_status(400)
    goto(page, "/skills")
    page.click("#skill-new")
    page.fill("#skill-field-name", "Bad Name!")
    page.fill("#skill-field-description", "ok")
    page.get_by_role("button", name="Create skill").click()
    expect(page.locator("#skill-field-name-error")).to_contain_text("lowercase")
    expect(page.locator("#skill-field-name")).to_have_attribute("aria-invalid", "true")
    # The server's own check: a description past 1,024 characters names that field.
    page.fill("#skill-field-name", "too-long-description")
    page.fill("#skill-field-description", "d" * 1100)
    page.get_by_role("button", name="Create skill").click()
    expect(page.locator("#skill-field-description-error")).not_to_be_empty()
    expect(page.locator("#skill-field-description")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#skill-field-name")).not_to_have_attribute("aria-invalid", "true")


def test_list_search_sort_import_export_and_delete(page: Page, live: LiveApp, tmp_path):
    create_in_ui(page, "alpha-skill", "Alpha does the first thing when asked about alpha.", "Step.")
    skill_md = tmp_path / "SKILL.md"
    skill_md.write_text(
        "---\nname: beta-import\ndescription: Imported beta skill, use for beta tasks.\n---\n\n"
        "# Beta\n\nDo the beta thing.\n"
    )
    goto(page, "/skills")
    page.set_input_files("#skill-import", str(skill_md))
    expect(page.locator("#skills-status")).to_contain_text("Imported beta-import")
    expect(page).to_have_url(re.compile(r"/skills/beta-import$"))
    expect(page.locator("#skill-detail .skill-body")).to_contain_text("Do the beta thing.")

    page.fill("#skills-q", "beta")
    expect(page.locator("#skills-list li")).to_have_count(1)
    page.fill("#skills-q", "")
    expect(page.locator('#skills-list li[data-name="alpha-skill"]')).to_have_count(1)
    page.select_option("#skills-sort", "name")
    names = page.locator("#skills-list .skill-name").all_inner_texts()
    assert names == sorted(names)

    with page.expect_download() as info:
        page.locator("#skill-detail").get_by_role("button", name="Export").click()
    path = tmp_path / "export.zip"
    info.value.save_as(path)
    assert info.value.suggested_filename == "beta-import.zip"
    with zipfile.ZipFile(path) as z:
        assert any(n.endswith("SKILL.md") for n in z.namelist())

    page.locator("#skill-detail").get_by_role("button", name="Delete").click()
    page.locator("#confirm").get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"/skills$"))
    expect(page.locator('#skills-list li[data-name="beta-import"]')).to_have_count(0)
    assert page.request.get("/api/skills/beta-import").status == 404


def test_a_bad_import_is_refused_with_a_message(page: Page, live: LiveApp, tmp_path, watch):
    watch.allow_http_status(400)
    bad = tmp_path / "SKILL.md"
    bad.write_text("no frontmatter at all")
    goto(page, "/skills")
    page.set_input_files("#skill-import", str(bad))
    expect(page.locator("#skills-status")).to_contain_text("Import failed")
