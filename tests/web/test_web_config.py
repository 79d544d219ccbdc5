"""The dashboard's settings as read from the environment."""

from __future__ import annotations

import pytest

from hermes.config import Config
from hermes.errors import ConfigError


def env(**values):
    return {"HERMES_HOME": "/tmp/hermes-home", "HERMES_WORKSPACE": "/tmp", **values}


def test_web_defaults():
    config = Config.from_env(env())
    assert config.secret_key is None and config.web_password is None
    assert config.web_allow_no_auth is False
    assert config.web_session_idle_minutes == 720
    assert config.trusted_proxies == 0
    assert config.ratelimit_storage == "memory://"


def test_web_settings_are_read():
    config = Config.from_env(
        env(
            FLASK_SECRET_KEY="k" * 32,
            HERMES_WEB_PASSWORD="pw",
            HERMES_WEB_ALLOW_NO_AUTH="true",
            HERMES_WEB_SESSION_IDLE_MINUTES="30",
            HERMES_TRUSTED_PROXIES="2",
            HERMES_RATELIMIT_STORAGE="redis://localhost:6379",
        )
    )
    assert config.secret_key == "k" * 32 and config.web_password == "pw"
    assert config.web_allow_no_auth is True
    assert config.web_session_idle_minutes == 30
    assert config.trusted_proxies == 2
    assert config.ratelimit_storage == "redis://localhost:6379"


def test_secrets_stay_out_of_the_config_repr():
    config = Config.from_env(env(FLASK_SECRET_KEY="s3cr3t-key-value", HERMES_WEB_PASSWORD="pw-9"))
    assert "s3cr3t-key-value" not in repr(config) and "pw-9" not in repr(config)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"HERMES_WEB_SESSION_IDLE_MINUTES": "0"}, "at least 1"),
        ({"HERMES_WEB_SESSION_IDLE_MINUTES": "soon"}, "whole number"),
        ({"HERMES_TRUSTED_PROXIES": "-1"}, "at least 0"),
        ({"HERMES_TRUSTED_PROXIES": "99"}, "at most 10"),
        ({"HERMES_WEB_ALLOW_NO_AUTH": "maybe"}, "true or false"),
    ],
)
def test_bad_web_settings_say_what_to_fix(values, message):
    with pytest.raises(ConfigError, match=message):
        Config.from_env(env(**values))
