from pathlib import Path

import pytest

from hermes.config import Config, child_environment
from hermes.errors import ConfigError


def env(**values):
    return {"HERMES_HOME": "/tmp/hermes-home", "HERMES_WORKSPACE": "/tmp", **values}


def test_provider_is_the_one_whose_key_is_set():
    config = Config.from_env(env(OPENAI_API_KEY="sk-test"))
    assert config.provider == "openai"
    assert config.model == "gpt-5"
    assert config.api_key == "sk-test"


def test_hermes_base_url_wins_and_local_servers_need_no_key():
    config = Config.from_env(
        env(
            HERMES_PROVIDER="openai",
            HERMES_BASE_URL="http://localhost:11434/v1",
            OPENAI_BASE_URL="http://elsewhere/v1",
            HERMES_MODEL="llama3.2",
        )
    )
    assert config.base_url == "http://localhost:11434/v1"
    assert config.model == "llama3.2"
    config.require_provider()  # no key needed for a local server


def test_sdk_base_url_variables_keep_working():
    config = Config.from_env(env(ANTHROPIC_BASE_URL="http://127.0.0.1:9/", ANTHROPIC_API_KEY="k"))
    assert (config.provider, config.base_url) == ("anthropic", "http://127.0.0.1:9/")


def test_openrouter_has_its_own_base_url():
    config = Config.from_env(env(OPENROUTER_API_KEY="k"))
    assert config.provider == "openrouter"
    assert config.base_url == "https://openrouter.ai/api/v1"


def test_defaults():
    config = Config.from_env(env())
    assert config.provider is None
    assert config.max_iterations == 25
    assert config.database_url == f"sqlite:///{Path('/tmp/hermes-home') / 'hermes.db'}"
    assert not config.web_enable_shell and not config.web_enable_write
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY, OPENAI_API_KEY"):
        config.require_provider()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"HERMES_PROVIDER": "gemini"}, "use one of anthropic, openai, openrouter"),
        ({"HERMES_MAX_ITERATIONS": "many"}, "HERMES_MAX_ITERATIONS must be a whole number"),
        ({"HERMES_MAX_ITERATIONS": "0"}, "HERMES_MAX_ITERATIONS must be at least 1"),
        ({"HERMES_WEB_ENABLE_SHELL": "maybe"}, "HERMES_WEB_ENABLE_SHELL must be true or false"),
        ({"HERMES_STREAM_TIMEOUT": "nan"}, "HERMES_STREAM_TIMEOUT must be a number of seconds"),
        ({"HERMES_BASH_TIMEOUT": "inf"}, "HERMES_BASH_TIMEOUT must be a number of seconds"),
        ({"HERMES_MAX_RETRIES": "10000"}, "HERMES_MAX_RETRIES must be at most 10"),
        (
            {"HERMES_DATABASE_URL": "hermes.db"},
            "HERMES_DATABASE_URL must be a URL such as sqlite:///",
        ),
    ],
)
def test_bad_values_name_the_variable(values, message):
    with pytest.raises(ConfigError, match=message):
        Config.from_env(env(**values))


def test_secrets_never_reach_child_processes(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret")
    monkeypatch.setenv("HERMES_WEB_PASSWORD", "secret")
    monkeypatch.setenv("SOME_TOOL_SETTING", "fine")
    child = child_environment()
    assert "ANTHROPIC_API_KEY" not in child and "HERMES_WEB_PASSWORD" not in child
    assert child["SOME_TOOL_SETTING"] == "fine"


def test_secrets_stay_out_of_reprs():
    from hermes.providers.base import ProviderSettings

    config = Config.from_env(env(ANTHROPIC_API_KEY="sk-ant-very-secret", FLASK_SECRET_KEY="s3"))
    assert "very-secret" not in repr(config) and "s3" not in repr(config)
    assert "very-secret" not in repr(ProviderSettings(model="m", api_key="sk-ant-very-secret"))


def test_any_provider_with_its_own_base_url_needs_no_key():
    config = Config.from_env(
        env(HERMES_PROVIDER="openrouter", HERMES_BASE_URL="http://127.0.0.1:9/v1")
    )
    config.require_provider()
    assert config.base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY is not set"):
        Config.from_env(env(HERMES_PROVIDER="openrouter")).require_provider()


def test_limits_are_configurable():
    config = Config.from_env(
        env(
            HERMES_TOOL_OUTPUT_LIMIT="50000",
            HERMES_USER_MEMORY_LIMIT="6000",
            HERMES_AGENT_MEMORY_LIMIT="12000",
            HERMES_SKILLS_IN_PROMPT="3",
        )
    )
    assert config.tool_output_limit == 50_000
    assert (config.user_memory_limit, config.agent_memory_limit) == (6_000, 12_000)
    assert config.skills_in_prompt == 3
    with pytest.raises(ConfigError, match="HERMES_SKILLS_IN_PROMPT must be at most 50"):
        Config.from_env(env(HERMES_SKILLS_IN_PROMPT="500"))
