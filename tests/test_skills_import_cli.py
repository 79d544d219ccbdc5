"""`hermes skills import|delete` with skills as they come from the wild, through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import clean_environ, run_hermes

COLON_SKILL = """\
---
name: release-notes
description: Use when: the user tags a release
metadata:
  triggers: release, tag
---

Write the notes: group the commits by kind.
"""


@pytest.fixture
def env(hermes_home: Path, workspace: Path) -> dict[str, str]:
    return clean_environ(HERMES_HOME=str(hermes_home), HERMES_WORKSPACE=str(workspace))


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text)
    return folder


def skill_md(name: str, description: str, body: str = "Steps.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"


def test_a_folder_import_takes_what_it_can_and_names_each_skip(env, tmp_path, workspace):
    many = tmp_path / "collection"
    write(many / "release-notes", COLON_SKILL)
    write(many / "broken", "no frontmatter at all\n")
    write(many / "taken", skill_md("taken", "The imported one."))
    run_hermes(
        ["skills", "import", str(write(tmp_path / "old" / "taken", skill_md("taken", "Mine.")))],
        env=env,
        cwd=workspace,
    )

    result = run_hermes(["skills", "import", str(many)], env=env, cwd=workspace)
    assert result.returncode == 1
    out = result.stdout
    assert "imported release-notes: Use when: the user tags a release" in out
    assert "skipped broken: " in out and "frontmatter" in out
    assert "skipped taken: " in out and "--replace" in out
    assert "Traceback" not in result.stderr
    assert "1 skill imported, 2 skipped" in result.stderr

    shown = run_hermes(["skills", "show", "release-notes"], env=env, cwd=workspace)
    assert "Use when: the user tags a release" in shown.stdout
    assert "Mine." in run_hermes(["skills", "show", "taken"], env=env, cwd=workspace).stdout


def test_replace_overwrites_and_keeps_the_old_version(env, tmp_path, workspace):
    first = write(tmp_path / "a" / "taken", skill_md("taken", "Mine.", "Old steps."))
    second = write(tmp_path / "b" / "taken", skill_md("taken", "Theirs: better", "New steps."))
    assert run_hermes(["skills", "import", str(first)], env=env, cwd=workspace).returncode == 0
    refused = run_hermes(["skills", "import", str(second)], env=env, cwd=workspace)
    assert refused.returncode != 0 and "--replace" in refused.stderr

    result = run_hermes(["skills", "import", "--replace", str(second)], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "replaced taken" in result.stdout
    assert "New steps." in run_hermes(["skills", "show", "taken"], env=env, cwd=workspace).stdout
    versions = run_hermes(["skills", "versions", "taken"], env=env, cwd=workspace).stdout
    assert "v1" in versions and "v2" in versions and "(current)" in versions
    diff = run_hermes(["skills", "diff", "taken", "1", "2"], env=env, cwd=workspace).stdout
    assert "-Old steps." in diff and "+New steps." in diff


def test_our_rewrite_of_a_lenient_skill_is_strict_yaml(env, tmp_path, workspace, hermes_home):
    import yaml

    skills_ref = pytest.importorskip("skills_ref")
    write(tmp_path / "src" / "release-notes", COLON_SKILL)
    run_hermes(
        ["skills", "import", str(tmp_path / "src" / "release-notes")], env=env, cwd=workspace
    )
    newer = write(tmp_path / "newer" / "release-notes", COLON_SKILL.replace("group", "sort"))
    result = run_hermes(["skills", "import", "--replace", str(newer)], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    folder = hermes_home / "skills" / "release-notes"
    front = (folder / "SKILL.md").read_text().split("---")[1]
    assert yaml.safe_load(front)["description"] == "Use when: the user tags a release"
    assert skills_ref.validate(folder) == []


def test_delete_removes_a_skill(env, tmp_path, workspace, hermes_home):
    source = write(tmp_path / "src" / "doomed", skill_md("doomed", "Goes away."))
    run_hermes(["skills", "import", str(source)], env=env, cwd=workspace)
    result = run_hermes(["skills", "delete", "doomed", "--yes"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "deleted skill doomed" in result.stdout
    assert not (hermes_home / "skills" / "doomed").exists()
    missing = run_hermes(["skills", "delete", "doomed", "--yes"], env=env, cwd=workspace)
    assert missing.returncode != 0 and "No skill named 'doomed'" in missing.stderr
