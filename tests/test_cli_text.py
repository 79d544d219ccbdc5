"""User text is printed as text: never read as rich markup, emoji codes or options."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import clean_environ, run_hermes


@pytest.fixture
def env(hermes_home: Path, workspace: Path) -> dict[str, str]:
    return clean_environ(HERMES_HOME=str(hermes_home), HERMES_WORKSPACE=str(workspace))


@pytest.mark.parametrize("query", ["[/]", "[red]x", "[bold]unclosed", ":smile: [link=x]y[/link]"])
def test_search_echoes_markup_like_queries_literally(env, workspace, query):
    result = run_hermes(["search", "--", query], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert f"No results for {query!r}." in result.stdout


def test_a_query_starting_with_a_dash_needs_double_dash_and_says_so(env, workspace):
    usage = run_hermes(["search", "--help"], env=env, cwd=workspace).stdout
    assert "[OPTIONS] [--] QUERY" in usage
    refused = run_hermes(["search", "-nginx"], env=env, cwd=workspace)
    assert refused.returncode == 2
    assert "hermes search -- -nginx" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    ok = run_hermes(["search", "--", "-nginx"], env=env, cwd=workspace)
    assert ok.returncode == 0 and "No results for '-nginx'." in ok.stdout


def test_skill_text_with_markup_is_shown_as_written(env, workspace, hermes_home):
    folder = hermes_home / "skills" / "odd-text"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: odd-text\ndescription: '[red]Red[/red] and [/] and :thumbs_up:'\n---\n\nBody.\n"
    )
    for args in (["skills", "list"], ["skills", "show", "odd-text"]):
        result = run_hermes(args, env=dict(env, COLUMNS="200"), cwd=workspace)
        assert result.returncode == 0, result.stderr
        assert "[red]Red[/red] and [/] and :thumbs_up:" in result.stdout
