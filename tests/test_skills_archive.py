"""Importing and exporting skills: every shape of input, and every hostile one."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from hermes.errors import Conflict, SkillError

SKILL = "---\nname: {name}\ndescription: {name} does things.\n---\nSteps for {name}.\n"


def write_skill(folder: Path, name: str, *, extra_files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL.format(name=name))
    for relative, text in (extra_files or {}).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    return folder


def snapshot(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_import_a_skill_folder_with_resources(skills, tmp_path):
    source = write_skill(
        tmp_path / "src" / "pdf-tools", "pdf-tools", extra_files={"scripts/x.py": "print(1)\n"}
    )
    (source / ".git").mkdir()
    (source / ".git" / "config").write_text("secret")
    [skill] = skills.import_path(source)
    assert skill.name == "pdf-tools" and skill.files == ["scripts/x.py"]
    assert not (skill.path / ".git").exists()


def test_import_a_single_skill_md(skills, tmp_path):
    path = tmp_path / "SKILL.md"
    path.write_text(SKILL.format(name="lone"))
    [skill] = skills.import_path(path)
    assert skill.name == "lone" and skill.body == "Steps for lone."


def test_import_a_folder_of_skills_uses_frontmatter_names(skills, tmp_path):
    write_skill(tmp_path / "many" / "one", "one")
    write_skill(tmp_path / "many" / "folder-name-differs", "two")
    (tmp_path / "many" / "README.md").write_text("not a skill")
    # folders in name order: folder-name-differs (skill "two"), then one
    assert [s.name for s in skills.import_path(tmp_path / "many")] == ["two", "one"]
    assert sorted(s.name for s in skills.list()) == ["one", "two"]


def test_import_a_zip_and_export_round_trip(skills, tmp_path):
    write_skill(tmp_path / "src" / "zipped", "zipped", extra_files={"references/R.md": "r\n"})
    archive = tmp_path / "skills.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(tmp_path / "src" / "zipped" / "SKILL.md", "zipped/SKILL.md")
        zf.write(tmp_path / "src" / "zipped" / "references" / "R.md", "zipped/references/R.md")
    [skill] = skills.import_path(archive)
    assert skill.files == ["references/R.md"]
    skills.refine("zipped", body="v2")  # creates .versions/, which export leaves out
    (tmp_path / "out").mkdir()
    out = skills.export_zip("zipped", tmp_path / "out")  # a folder: NAME.zip inside
    assert out.name == "zipped.zip"
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["zipped/SKILL.md", "zipped/references/R.md"]
    skills.delete("zipped")
    [again] = skills.import_path(out)
    assert (again.name, again.body, again.version) == ("zipped", "v2", 2)


def test_a_name_conflict_skips_that_skill_and_imports_the_rest(skills, tmp_path, config):
    write_skill(tmp_path / "many" / "fresh", "fresh")
    write_skill(tmp_path / "many" / "taken", "taken")
    skills.create("taken", "Already here.", "body")
    report = skills.import_skills(tmp_path / "many")
    assert [s.name for s in report.installed] == ["fresh"]
    assert [what for what, _ in report.skipped] == ["taken"]
    assert "already exists" in report.skipped[0][1]
    assert skills.get("taken").description == "Already here."  # untouched


def test_a_single_conflicting_skill_is_refused_and_writes_nothing(skills, tmp_path, config):
    source = write_skill(tmp_path / "src" / "taken", "taken")
    skills.create("taken", "Already here.", "body")
    before = snapshot(config.skills_dir)
    with pytest.raises(Conflict):
        skills.import_path(source)
    assert snapshot(config.skills_dir) == before


def make_zip(path: Path, entries: list[tuple[str | zipfile.ZipInfo, str]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path


def symlink_entry(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize(
    "bad_entry",
    [
        ("../evil/SKILL.md", SKILL.format(name="evil")),
        ("ok/../../evil.txt", "x"),
        ("/abs/SKILL.md", SKILL.format(name="abs")),
        ("C:/windows/evil.txt", "x"),
        ("..\\evil.txt", "x"),
        (symlink_entry("ok/link", "/etc/passwd"), "/etc/passwd"),
    ],
)
def test_hostile_zips_are_refused_whole(skills, tmp_path, config, bad_entry):
    archive = make_zip(tmp_path / "bad.zip", [("ok/SKILL.md", SKILL.format(name="ok")), bad_entry])
    before = snapshot(config.skills_dir)
    with pytest.raises(SkillError):
        skills.import_path(archive)
    assert snapshot(config.skills_dir) == before
    assert not (tmp_path / "evil").exists() and not (tmp_path / "evil.txt").exists()
    assert not Path("/abs").exists()


def test_zip_with_a_bad_skill_name_is_refused(skills, tmp_path, config):
    archive = make_zip(tmp_path / "bad.zip", [("x/SKILL.md", SKILL.format(name="../../etc"))])
    with pytest.raises(SkillError, match="Invalid skill name"):
        skills.import_path(archive)
    assert snapshot(config.skills_dir) == []


def test_folder_with_a_symlink_is_refused(skills, tmp_path, config):
    source = write_skill(tmp_path / "src" / "linky", "linky")
    os.symlink("/etc/passwd", source / "passwd")
    with pytest.raises(SkillError, match="symlink"):
        skills.import_path(source)
    assert snapshot(config.skills_dir) == []


def test_symlinked_skill_md_is_refused(skills, tmp_path):
    (tmp_path / "src").mkdir()
    real = tmp_path / "real.md"
    real.write_text(SKILL.format(name="real"))
    os.symlink(real, tmp_path / "src" / "SKILL.md")
    with pytest.raises(SkillError):
        skills.import_path(tmp_path / "src")


def test_garbage_inputs(skills, tmp_path):
    with pytest.raises(SkillError, match="no such file"):
        skills.import_path(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SkillError, match="No skills found"):
        skills.import_path(tmp_path / "empty")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SkillError):
        skills.import_path(bad)
    notes = tmp_path / "SKILL.md"
    notes.write_text("just text, no frontmatter")
    with pytest.raises(SkillError, match="frontmatter"):
        skills.import_path(notes)


def test_zip_bomb_member_is_refused(skills, tmp_path, monkeypatch):
    from hermes.skills import archive as archive_module

    monkeypatch.setattr(archive_module, "MAX_MEMBER_BYTES", 1000)
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big/SKILL.md", SKILL.format(name="big"))
        zf.writestr("big/assets/zeros.bin", b"\0" * 100_000)
    with pytest.raises(SkillError, match="too large"):
        skills.import_path(path)


def test_foreign_skill_with_only_name_and_description_imports_and_is_offered(skills, tmp_path):
    source = tmp_path / "their-agent" / "invoice-parser"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_text(
        "---\nname: invoice-parser\ndescription: Parse PDF invoices into CSV rows.\n---\n"
        "Use pdfplumber; one row per line item.\n"
    )
    [skill] = skills.import_path(source)
    assert (skill.version, skill.uses, skill.created_by) == (1, 0, "user")
    assert [s.name for s in skills.relevant("turn these invoices into a csv")] == ["invoice-parser"]
    # the file is left as the other agent wrote it
    assert (skill.path / "SKILL.md").read_text() == (source / "SKILL.md").read_text()
