"""`hermes skills ...` through the real console-script entry point."""

from __future__ import annotations

import zipfile

import pytest
from click.testing import CliRunner

from hermes.cli.main import cli


@pytest.fixture
def run(hermes_home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no stray .env, and exports land here
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(cli, ["skills", *args], env={"HERMES_HOME": str(hermes_home)})

    return invoke


def test_list_show_export_import_versions(run, skills, tmp_path):
    assert "No skills yet." in run("list").output
    skills.create("make-tea", "Brew green tea.", "1. Boil water.", triggers=["tea"])
    skills.refine("make-tea", body="1. Boil water to 80C.")
    result = run("list")
    assert (
        result.exit_code == 0 and "make-tea" in result.output and "Brew green tea." in result.output
    )
    shown = run("show", "make-tea").output
    assert "version 2" in shown and "triggers: tea" in shown and "Boil water to 80C" in shown
    assert "v1" in run("versions", "make-tea").output
    assert "+1. Boil water to 80C." in run("diff", "make-tea", "1", "2").output
    assert "restored from v1 as v3" in run("restore", "make-tea", "1").output

    result = run("export", "make-tea", "-o", str(tmp_path / "tea.zip"))
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(tmp_path / "tea.zip") as zf:
        assert zf.namelist() == ["make-tea/SKILL.md"]
    skills.delete("make-tea")
    result = run("import", str(tmp_path / "tea.zip"))
    assert result.exit_code == 0 and "1 skill imported" in result.output
    # an export leaves the history behind: the re-imported skill starts its history at v3
    assert [v.version for v in skills.versions("make-tea")] == [3]


def test_errors_are_one_line_without_traceback(hermes_home, tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.chdir(tmp_path)
    env = {"HERMES_HOME": str(hermes_home), "PATH": "/usr/bin:/bin"}
    for args, expected in [
        (["show", "../../etc"], "Invalid skill name"),
        (["show", "missing"], "No skill named 'missing'"),
        (["import", str(tmp_path / "nothing")], "no such file"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "hermes", "skills", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode != 0
        assert expected in done.stderr and "Traceback" not in done.stderr
