"""SKILL.md parsing, writing and validation."""

from __future__ import annotations

import pytest

from hermes.errors import SkillError
from hermes.skills import Skill, parse_skill_md, render_skill_md, validate_skill
from hermes.skills.schema import validate_name

FULL = """---
name: pdf-tools
description: 'Extract text from PDFs: use when the user mentions PDF files.'
license: MIT
compatibility: Requires poppler-utils
allowed-tools: Bash(pdftotext:*) Read
metadata:
  triggers: pdf, extract text
  version: '3'
  uses: '7'
  created-by: agent
  source-session: '42'
  updated-at: '2025-01-02T03:04:05+00:00'
  author: someone
---

# Steps

1. Run `pdftotext file.pdf -`.
"""


def test_parse_write_parse_round_trip_is_byte_identical():
    skill = parse_skill_md(FULL)
    assert skill.name == "pdf-tools"
    assert skill.license == "MIT"
    assert skill.allowed_tools == "Bash(pdftotext:*) Read"
    assert skill.triggers == ["pdf", "extract text"]
    assert (skill.version, skill.uses, skill.created_by, skill.source_session) == (
        3,
        7,
        "agent",
        42,
    )
    assert skill.metadata["author"] == "someone"
    assert skill.body.startswith("# Steps")
    text = render_skill_md(skill)
    assert text == FULL
    assert parse_skill_md(text) == skill


def test_crlf_and_bom_are_tolerated():
    skill = parse_skill_md("\ufeff" + FULL.replace("\n", "\r\n"))
    assert render_skill_md(skill) == FULL


def test_written_frontmatter_parses_with_yaml_and_is_deterministic():
    skill = Skill(
        name="a-b",
        description="Says: yes # not a comment",
        body="x",
        metadata={"version": "1", "triggers": "a, b", "zeta": "z", "alpha": "a"},
    )
    first = render_skill_md(skill)
    assert first == render_skill_md(skill)
    # hermes keys first in a fixed order, then the others sorted
    assert (
        first.index("triggers")
        < first.index("version")
        < first.index("alpha")
        < first.index("zeta")
    )
    assert parse_skill_md(first).description == "Says: yes # not a comment"


@pytest.mark.parametrize(
    "name",
    ["../../etc", "Bad_Name", "-x", "x-", "a--b", "a" * 65, "", "a b", "café", "a/b", ".hidden"],
)
def test_bad_names_are_refused(name):
    with pytest.raises(SkillError):
        validate_name(name)


@pytest.mark.parametrize("name", ["a", "a1", "deploy-flask-app", "x" * 64, "0-9"])
def test_good_names_pass(name):
    assert validate_name(name) == name


def test_description_limit():
    validate_skill(Skill(name="ok", description="d" * 1024))
    with pytest.raises(SkillError, match="1025 characters"):
        validate_skill(Skill(name="ok", description="d" * 1025))
    with pytest.raises(SkillError, match="description"):
        validate_skill(Skill(name="ok", description="  "))


def test_unknown_top_level_key_is_refused_for_our_skills():
    skill = parse_skill_md("---\nname: ok\ndescription: d\nversion: 2\n---\nbody\n")
    assert skill.extra == {"version": 2}
    with pytest.raises(SkillError, match="metadata"):
        validate_skill(skill)


def test_name_must_equal_folder():
    with pytest.raises(SkillError, match="folder"):
        validate_skill(Skill(name="one", description="d"), folder_name="two")


def test_compatibility_limit_and_triple_dash():
    with pytest.raises(SkillError, match="compatibility"):
        validate_skill(Skill(name="ok", description="d", compatibility="c" * 501))
    with pytest.raises(SkillError, match="---"):
        validate_skill(Skill(name="ok", description="before --- after"))


def test_lenient_parse_of_a_foreign_skill():
    text = (
        "---\nname: their-skill\ndescription: Does their thing.\nauthor: them\n"
        "tags: [a, b]\nmetadata:\n  version: 2\n  list: [1, 2]\nallowed-tools: [Read, Write]\n---\n"
        "Do it.\n"
    )
    skill = parse_skill_md(text)
    assert skill.name == "their-skill"
    assert skill.metadata == {"version": "2", "list": "1, 2"}
    assert skill.allowed_tools == "Read Write"
    assert skill.extra == {"author": "them", "tags": ["a", "b"]}
    # unknown keys survive a rewrite
    assert parse_skill_md(render_skill_md(skill)).extra == skill.extra


@pytest.mark.parametrize(
    "text",
    [
        "no frontmatter at all",
        "---\nname: x\n",  # never closed
        "---\nname: [unclosed\n---\nbody",
        "---\n- a list\n---\nbody",
        "---\ndescription: no name\n---\n",
        "---\nname: no-description\n---\n",
        "---\nname: x\ndescription: ''\n---\n",
    ],
)
def test_unusable_files_raise_skill_error(text):
    with pytest.raises(SkillError):
        parse_skill_md(text)


def test_our_files_pass_the_reference_validator(skills):
    skills_ref = pytest.importorskip("skills_ref")
    skill = skills.create(
        "ref-check",
        "Checks that files pass skills-ref: use when validating.",
        "1. step: with a colon\n2. 'quoted'",
        triggers=["validate", "agent skills"],
        source_session=5,
    )
    assert skills_ref.validate(skill.path) == []
    refined = skills.refine("ref-check", body="new body")
    assert skills_ref.validate(refined.path) == []
    # and their parser reads our hermes fields back as strings
    props = skills_ref.read_properties(refined.path)
    assert props.metadata["version"] == "2"
    assert props.metadata["triggers"] == "validate, agent skills"
