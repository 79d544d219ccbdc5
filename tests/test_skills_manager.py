"""SkillManager: the library on disk, its versions and its relevance ranking."""

from __future__ import annotations

import logging

import pytest

from hermes.errors import Conflict, NotFound, SkillError
from hermes.skills import parse_skill_md

STEPS = "1. Write a Procfile.\n2. Run `railway up`.\n3. Check the logs."


def make(skills, name="deploy-flask-railway", **kw):
    kw.setdefault("triggers", ["railway", "deploy", "flask"])
    return skills.create(
        name, kw.pop("description", "Deploy a Flask app to Railway with gunicorn."), STEPS, **kw
    )


def test_create_writes_a_valid_skill_folder(skills, config):
    skill = make(skills, source_session=7)
    path = config.skills_dir / "deploy-flask-railway" / "SKILL.md"
    assert skill.path == path.parent
    assert (skill.version, skill.uses, skill.created_by, skill.source_session) == (1, 0, "agent", 7)
    assert skill.triggers == ["railway", "deploy", "flask"]
    on_disk = parse_skill_md(path.read_text())
    assert on_disk.name == "deploy-flask-railway" and on_disk.body == STEPS
    assert skill.to_dict()["updated_at"]
    assert set(skill.to_detail_dict()) >= {"body", "files", "name", "version"}
    # nothing but the skill folder is left behind (no staging folders)
    assert [p.name for p in config.skills_dir.iterdir()] == ["deploy-flask-railway"]


def test_create_refuses_duplicates_and_invalid_input(skills, config):
    make(skills)
    with pytest.raises(Conflict):
        make(skills)
    with pytest.raises(SkillError):
        skills.create("../../etc", "d", "b")
    with pytest.raises(SkillError):
        skills.create("ok-name", "d" * 1025, "b")
    assert not (config.home / "etc").exists()
    assert [s.name for s in skills.list()] == ["deploy-flask-railway"]


def test_get_refuses_traversal_and_reports_missing(skills):
    with pytest.raises(SkillError):
        skills.get("../../etc")
    with pytest.raises(SkillError):
        skills.get("/etc/passwd")
    with pytest.raises(NotFound):
        skills.get("nope")


def test_refine_keeps_the_previous_version_and_diff_restore(skills):
    make(skills)
    skills.record_use("deploy-flask-railway")
    v2 = skills.refine("deploy-flask-railway", body=STEPS + "\n4. Open the URL.", source_session=9)
    assert (v2.version, v2.uses, v2.source_session) == (2, 1, 9)
    versions = skills.versions("deploy-flask-railway")
    assert [(v.version, v.current) for v in versions] == [(1, False), (2, True)]
    diff = skills.diff("deploy-flask-railway", 1, 2)
    assert "+4. Open the URL." in diff and "-  version: '1'" in diff
    assert diff.startswith("--- deploy-flask-railway/SKILL.md@v1")
    v3 = skills.restore("deploy-flask-railway", 1)
    assert v3.version == 3 and v3.body == STEPS and v3.uses == 1
    assert [v.version for v in skills.versions("deploy-flask-railway")] == [1, 2, 3]
    assert "4. Open the URL." in skills.version_text("deploy-flask-railway", 2)
    with pytest.raises(NotFound):
        skills.diff("deploy-flask-railway", 1, 9)
    # history is not a skill, and its files are not named SKILL.md
    assert [s.name for s in skills.list()] == ["deploy-flask-railway"]
    assert not list((v3.path / ".versions").rglob("SKILL.md"))


def test_record_use_counts_without_a_new_version(skills):
    make(skills)
    for _ in range(3):
        skill = skills.record_use("deploy-flask-railway")
    assert (skill.uses, skill.version) == (3, 1)
    assert [v.version for v in skills.versions("deploy-flask-railway")] == [1]


def test_update_from_full_text_and_fields(skills):
    make(skills)
    text = (
        "---\nname: deploy-flask-railway\ndescription: Edited by hand.\n"
        "metadata:\n  version: '99'\n  triggers: railway\n---\nNew steps.\n"
    )
    skill = skills.update("deploy-flask-railway", text)
    assert (skill.version, skill.description, skill.body, skill.created_by) == (
        2,
        "Edited by hand.",
        "New steps.",
        "agent",
    )
    skill = skills.update("deploy-flask-railway", description="Again.", triggers="a, b")
    assert (skill.version, skill.triggers) == (3, ["a", "b"])
    with pytest.raises(SkillError, match="renamed"):
        skills.update("deploy-flask-railway", text.replace("name: deploy", "name: other"))
    with pytest.raises(SkillError, match="Unexpected"):
        skills.update("deploy-flask-railway", text.replace("description:", "evil: 1\ndescription:"))
    assert skills.get("deploy-flask-railway").version == 3


def test_delete(skills, config):
    make(skills)
    skills.delete("deploy-flask-railway")
    assert skills.list() == []
    assert list(config.skills_dir.iterdir()) == []
    with pytest.raises(NotFound):
        skills.delete("deploy-flask-railway")


def test_search_covers_name_description_triggers_and_body(skills):
    make(skills)
    skills.create(
        "make-tea",
        "Brew green tea.",
        "Boil water to 80C; steep for two minutes.",
        triggers=["kettle"],
    )
    assert [s.name for s in skills.search("railway")] == ["deploy-flask-railway"]
    assert [s.name for s in skills.search("kettle")] == ["make-tea"]
    assert [s.name for s in skills.search("steep")] == ["make-tea"]  # body only
    assert [s.name for s in skills.search("Procf")] == ["deploy-flask-railway"]  # substring
    assert len(skills.search("")) == 2
    assert skills.search("quantum chromodynamics") == []


def test_relevant_picks_related_skills_and_ignores_small_talk(skills):
    make(skills)
    skills.create("make-tea", "Brew green tea.", "Boil water.", triggers=["tea", "kettle"])
    assert [s.name for s in skills.relevant("please deploy my flask app to railway")] == [
        "deploy-flask-railway"
    ]
    assert skills.relevant("hi, how are you?") == []
    assert len(skills.relevant("deploy tea", limit=1)) == 1


def test_foreign_skill_loads_leniently_is_offered_and_usable(skills, config):
    folder = config.skills_dir / "csv-cleanup"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: csv-cleanup\ndescription: Clean messy CSV files with pandas.\n"
        "author: another-agent\n---\nLoad with pandas, drop empty rows.\n"
    )
    skill = skills.get("csv-cleanup")
    assert (skill.version, skill.uses, skill.created_by, skill.triggers) == (1, 0, "user", [])
    assert [s.name for s in skills.relevant("my csv file is messy")] == ["csv-cleanup"]
    used = skills.record_use("csv-cleanup")
    assert used.uses == 1 and used.extra == {"author": "another-agent"}
    refined = skills.refine("csv-cleanup", body="Better steps.")
    assert refined.version == 2 and refined.extra == {"author": "another-agent"}


def test_broken_skills_are_skipped_with_a_warning(skills, config, caplog):
    make(skills)
    for name, text in {
        "broken": "---\nname: [oops\n---\n",
        "no-desc": "---\nname: no-desc\n---\n",
    }.items():
        (config.skills_dir / name).mkdir()
        (config.skills_dir / name / "SKILL.md").write_text(text)
    (config.skills_dir / "Bad_Folder").mkdir()
    (config.skills_dir / "Bad_Folder" / "SKILL.md").write_text(
        "---\nname: x\ndescription: d\n---\n"
    )
    (config.skills_dir / "not-a-skill").mkdir()
    with caplog.at_level(logging.WARNING):
        names = [s.name for s in skills.list()]
    assert names == ["deploy-flask-railway"]
    assert "broken" in caplog.text and "no-desc" in caplog.text and "Bad_Folder" in caplog.text
    with pytest.raises(SkillError):
        skills.get("broken")


def test_cache_notices_edits_on_disk(skills):
    skill = make(skills)
    assert skills.get(skill.name).description.startswith("Deploy")
    path = skill.path / "SKILL.md"
    path.write_text(path.read_text().replace("Deploy a Flask", "Ship a Flask") + "\n")
    assert skills.get(skill.name).description.startswith("Ship")


def test_files_lists_bundled_resources(skills):
    skill = make(skills)
    (skill.path / "scripts").mkdir()
    (skill.path / "scripts" / "run.sh").write_text("echo hi\n")
    (skill.path / "references").mkdir()
    (skill.path / "references" / "NOTES.md").write_text("notes\n")
    assert skills.get(skill.name).files == ["references/NOTES.md", "scripts/run.sh"]


def test_concurrent_uses_are_all_counted(skills, config, store):
    import threading

    from hermes.skills import SkillManager

    make(skills)
    # two managers on the same folder, as the web server may build
    managers = [skills, SkillManager(config.skills_dir, uses=store)]

    def work(manager):
        for _ in range(10):
            manager.record_use("deploy-flask-railway")

    threads = [threading.Thread(target=work, args=(managers[i % 2],)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert skills.get("deploy-flask-railway").uses == 60


def test_skills_are_hashable_values(skills):
    skill = make(skills)
    assert skill in {skills.get(skill.name)}


def test_using_an_imported_skill_leaves_its_files_byte_identical(skills, store, tmp_path):
    folder = tmp_path / "src" / "csv-cleanup"
    folder.mkdir(parents=True)
    original = (
        b"---\nname: csv-cleanup\ndescription: Clean messy CSV files.\n"
        b"metadata:\n  uses: '4'\n---\nLoad with pandas.\n"
    )
    (folder / "SKILL.md").write_bytes(original)
    [imported] = skills.import_path(folder)
    assert imported.uses == 4  # a count an older Hermes wrote in the file still counts
    for _ in range(2):
        used = skills.record_use("csv-cleanup")
    assert (imported.path / "SKILL.md").read_bytes() == original
    assert used.uses == 6 and used.last_used_at is not None
    assert store.skill_use_counts()["csv-cleanup"][0] == 2
    assert skills.list()[0].uses == 6
    refined = skills.refine("csv-cleanup", body="Better steps.")
    assert refined.uses == 6 and "uses: '4'" in (refined.path / "SKILL.md").read_text()
