"""Providers are plugins (entry point group ``hermes.providers``), as in simonw/llm.

A real installed-style plugin (a module plus its ``.dist-info`` with
``entry_points.txt`` on the path) is picked up by the real ``hermes`` command.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import clean_environ, run_hermes

PLUGIN = '''
from hermes.events import StreamEnd, TextDelta, Usage
from hermes.providers.base import Provider


class EchoProvider(Provider):
    """Answers with the last thing the user said."""

    name = "echo"
    default_model = "echo-1"
    key_variable = "ECHO_API_KEY"

    def stream(self, request):
        said = request.messages[-1].content
        yield TextDelta(f"echo({self.model}, {self.settings.api_key}): {said}")
        yield Usage(input_tokens=1, output_tokens=1)
        yield StreamEnd()
'''


@pytest.fixture
def plugin_path(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    info = site / "hermes_echo-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "hermes_echo.py").write_text(PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-echo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hermes.providers]\necho = hermes_echo:EchoProvider\n")
    return site


@pytest.fixture
def env(plugin_path: Path, hermes_home: Path, workspace: Path) -> dict[str, str]:
    return clean_environ(
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        PYTHONPATH=os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")]),
    )


def test_a_plugin_provider_is_chosen_by_name(env, workspace):
    result = run_hermes(
        ["chat", "-q", "hello plugin"],
        env=dict(env, HERMES_PROVIDER="echo", ECHO_API_KEY="k-1"),
        cwd=workspace,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "echo(echo-1, k-1): hello plugin"


def test_a_plugin_says_which_key_it_needs(env, workspace):
    result = run_hermes(["chat", "-q", "hi"], env=dict(env, HERMES_PROVIDER="echo"), cwd=workspace)
    assert result.returncode != 0
    assert "ECHO_API_KEY is not set" in result.stderr


def test_unknown_providers_list_the_registered_ones(env, workspace):
    result = run_hermes(
        ["chat", "-q", "hi"], env=dict(env, HERMES_PROVIDER="gemini"), cwd=workspace
    )
    assert result.returncode != 0
    assert "use one of anthropic, echo, openai, openrouter" in result.stderr


def test_built_ins_come_from_the_same_entry_point_group():
    from importlib import metadata

    names = {ep.name: ep.value for ep in metadata.entry_points(group="hermes.providers")}
    assert names["anthropic"] == "hermes.providers.anthropic:AnthropicProvider"
    assert names["openai"] == "hermes.providers.openai_compat:OpenAIProvider"
    assert names["openrouter"] == "hermes.providers.openai_compat:OpenRouterProvider"
