"""Skill files built to cost us: YAML alias bombs, giant frontmatter and descriptions,
and zips whose entries cannot all be unpacked. Each is refused (or capped) quickly."""

from __future__ import annotations

import time
import zipfile

import pytest

from hermes.errors import SkillError
from hermes.skills import parse_skill_md
from hermes.skills.index import render_index
from hermes.skills.schema import MAX_DESCRIPTION, MAX_FRONTMATTER, MAX_METADATA_VALUE, Skill


def alias_bomb(levels: int) -> str:
    """A "billion laughs": 9 aliases of 9 aliases of ... a list of 9 strings.

    7 levels fit in under 600 bytes and stand for 9**7 (4.8 million) strings
    once the values are turned into text.
    """
    lines = ["a0: &a0 [" + ",".join(['"xxxxxxxxxx"'] * 9) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    body = "\n".join("  " + line for line in lines)
    return f"---\nname: bomb\ndescription: d\nmetadata:\n{body}\n---\nbody\n"


def test_an_alias_bomb_is_refused_at_once():
    text = alias_bomb(7)
    assert len(text) < 600
    start = time.monotonic()
    with pytest.raises(SkillError, match="anchor or alias"):
        parse_skill_md(text)
    assert time.monotonic() - start < 5  # unguarded, this takes minutes and gigabytes


@pytest.mark.parametrize(
    "frontmatter",
    [
        "name: x\ndescription: &d some text\n",  # an anchor alone
        "name: x\ndescription: d\nlicense: &l MIT\ncompatibility: *l\n",
        "name: x\ndescription: d\nmetadata: &m {a: b}\nextra: *m\n",
    ],
)
def test_anchors_and_aliases_anywhere_are_refused(frontmatter):
    with pytest.raises(SkillError, match="anchor or alias"):
        parse_skill_md(f"---\n{frontmatter}---\nbody\n")


def test_ampersands_and_stars_in_plain_text_still_load():
    skill = parse_skill_md(
        '---\nname: x\ndescription: "Build & test *fast*"\nmetadata:\n  triggers: r&d, *\n---\n'
    )
    assert skill.description == "Build & test *fast*"
    assert skill.metadata["triggers"] == "r&d, *"


def test_a_tab_repaired_file_with_an_alias_is_refused_too():
    text = "---\nname: x\ndescription: d\nmetadata:\n\ta: &a [1]\n\tb: *a\n---\n"
    with pytest.raises(SkillError, match="anchor or alias"):
        parse_skill_md(text)


def test_oversized_frontmatter_is_refused():
    filler = "".join(f"  k{i}: {'v' * 50}\n" for i in range(MAX_FRONTMATTER // 50))
    text = f"---\nname: big\ndescription: d\nmetadata:\n{filler}---\nbody\n"
    with pytest.raises(SkillError, match=f"the limit is {MAX_FRONTMATTER}"):
        parse_skill_md(text)


def test_a_long_metadata_value_is_cut():
    items = ", ".join(["word"] * 2000)  # a YAML list of 2,000 words: 11,998 characters joined
    skill = parse_skill_md(f"---\nname: x\ndescription: d\nmetadata:\n  tags: [{items}]\n---\n")
    assert len(skill.metadata["tags"]) == MAX_METADATA_VALUE
    assert skill.metadata["tags"].startswith("word, word")


def _skill_md(description: str, name: str = "huge") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nbody\n"


def test_importing_a_skill_with_an_overlong_description_is_refused(skills, tmp_path):
    path = tmp_path / "SKILL.md"
    path.write_text(_skill_md("deploy flask app " * 200))
    with pytest.raises(SkillError, match=f"Agent Skills limit is {MAX_DESCRIPTION}"):
        skills.import_path(path)
    path.write_text(_skill_md("deploy flask app " * 50_000))  # the reviewer's 850 KB one
    with pytest.raises(SkillError, match="the limit is"):
        skills.import_path(path)
    assert skills.list() == []


def test_a_folder_import_skips_the_overlong_description_and_says_why(skills, tmp_path):
    source = tmp_path / "many"
    for name, description in (("fine", "Does fine things."), ("huge", "x" * 5000)):
        (source / name).mkdir(parents=True)
        (source / name / "SKILL.md").write_text(_skill_md(description, name))
    (source / "edge").mkdir()
    (source / "edge" / "SKILL.md").write_text(_skill_md("y" * MAX_DESCRIPTION, "edge"))
    report = skills.import_skills(source)
    assert sorted(s.name for s in report.installed) == ["edge", "fine"]
    [(what, why)] = report.skipped
    assert what == "huge" and "5000 characters" in why and str(MAX_DESCRIPTION) in why


def test_render_index_caps_a_hand_placed_skill_s_line():
    triggers = ", ".join(f"t{i}-" + "z" * 100 for i in range(50))
    huge = Skill(
        name="huge", description="deploy flask app " * 50_000, metadata={"triggers": triggers}
    )
    small = Skill(name="tea", description="Brews tea.", metadata={"triggers": "tea"})
    index = render_index([huge, small])
    first, second = index.splitlines()
    assert second == "- tea: Brews tea. [triggers: tea]"
    # The description at the format's limit, then at most 20 triggers of 64 characters.
    assert len(first) < MAX_DESCRIPTION + 20 * 66 + 40
    assert first.startswith("- huge: deploy flask app") and "…" in first


def test_a_zip_holding_a_file_and_a_folder_of_one_name_is_refused(skills, tmp_path):
    path = tmp_path / "clash.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("s/SKILL.md", _skill_md("d", "ok-skill"))
        archive.writestr("s/x", "1")
        archive.writestr("s/x/y", "2")
    with pytest.raises(SkillError, match="a file and a folder of the same name"):
        skills.import_path(path)
    assert skills.list() == []
    assert not [p for p in skills.root.iterdir() if p.name.startswith(".import-")]
