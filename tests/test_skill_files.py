"""A skill from the wild (anthropics/skills' ``pdf`` shape) is usable in full:
the model lists and reads every bundled file, and runs its scripts.

Driven through the real ``hermes skills import`` and ``hermes chat --json``
against the scripted model server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import clean_environ, run_hermes

PDF_SKILL = """\
---
name: pdf
description: Comprehensive PDF manipulation toolkit. Use when filling PDF forms.
license: Proprietary. LICENSE.txt has complete terms
---

# PDF processing

To fill a form, read FORMS.md first, then run scripts/fill_form.py.
"""


@pytest.fixture
def pdf_skill(tmp_path: Path) -> Path:
    folder = tmp_path / "anthropics-skills" / "pdf"
    (folder / "scripts").mkdir(parents=True)
    (folder / "reference").mkdir()
    (folder / "SKILL.md").write_text(PDF_SKILL)
    (folder / "FORMS.md").write_text("# Forms\n\n  Indented step: check fields first.\n")
    (folder / "reference" / "api.md").write_text("pypdf reference\n")
    (folder / "LICENSE.txt").write_text("terms\n")
    (folder / "scripts" / "fill_form.py").write_text("print('form filled')\n")
    (folder / "scripts" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    return folder


@pytest.fixture
def env(fake_llm, hermes_home: Path, workspace: Path) -> dict[str, str]:
    return clean_environ(
        **fake_llm.env("openai"),
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_MAX_RETRIES="0",
    )


def tool_results(stdout: str) -> list[dict]:
    events = [json.loads(line) for line in stdout.splitlines()]
    return [e for e in events if e["type"] == "tool_result"]


def test_the_model_reads_bundled_files_and_runs_scripts(
    fake_llm, env, workspace, hermes_home, pdf_skill
):
    imported = run_hermes(["skills", "import", str(pdf_skill)], env=env, cwd=workspace)
    assert imported.returncode == 0, imported.stderr
    script = hermes_home / "skills" / "pdf" / "scripts" / "fill_form.py"
    fake_llm.reply(tool_calls=[("use_skill", {"name": "pdf"})])
    fake_llm.reply(tool_calls=[("use_skill", {"name": "pdf", "path": "FORMS.md"})])
    fake_llm.reply(tool_calls=[("use_skill", {"name": "pdf", "path": "reference/api.md"})])
    fake_llm.reply(tool_calls=[("run_bash", {"command": f"python3 {script}"})])
    fake_llm.reply("The form is filled.")
    result = run_hermes(["chat", "-q", "fill my PDF form", "--json"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr

    loaded, forms, reference, ran = tool_results(result.stdout)
    assert not loaded["is_error"]
    for bundled in ("FORMS.md", "LICENSE.txt", "reference/api.md", "scripts/fill_form.py"):
        assert f"- {bundled}" in loaded["output"]
    assert str(script) in loaded["output"]  # the absolute path to run it by
    assert not forms["is_error"]
    assert "     3\t  Indented step: check fields first." in forms["output"]
    assert "pypdf reference" in reference["output"]
    assert ran["output"].startswith("form filled")
    # The tool description tells the model how.
    spec = next(
        t for t in fake_llm.requests[0].json["tools"] if t["function"]["name"] == "use_skill"
    )
    assert "path" in spec["function"]["parameters"]["properties"]
    assert "FORMS.md" in spec["function"]["description"]


def test_reads_stay_inside_the_skill_folder(fake_llm, env, workspace, hermes_home, pdf_skill):
    run_hermes(["skills", "import", str(pdf_skill)], env=env, cwd=workspace)
    secret = hermes_home / "secret.txt"
    secret.write_text("do not show\n")
    # A hand-placed link inside the skill folder pointing out of it.
    os.symlink(secret, hermes_home / "skills" / "pdf" / "leak.md")
    attempts = [
        "../../secret.txt",
        str(secret),
        "leak.md",
        "scripts/logo.png",
        "nope.md",
        "scripts",
    ]
    for path in attempts:
        fake_llm.reply(tool_calls=[("use_skill", {"name": "pdf", "path": path})])
    fake_llm.reply("Could not.")
    result = run_hermes(["chat", "-q", "read things", "--json"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr

    outcomes = tool_results(result.stdout)
    assert [o["is_error"] for o in outcomes] == [True] * len(attempts)
    assert all("do not show" not in o["output"] for o in outcomes)
    outside, absolute, link, binary, missing, folder = (o["output"] for o in outcomes)
    assert "not a file of skill 'pdf'" in outside and "not a file of skill" in link
    assert "not a file of skill" in absolute
    assert "binary" in binary
    assert "has no file 'nope.md'" in missing
    assert "scripts/fill_form.py" in folder
