"""All settings, read from the environment in this one place.

Three sources, the first that sets a variable wins: the real environment,
then ``$HERMES_HOME/.env`` (Hermes' settings file, loaded whole), then a
``.env`` in the current folder. That last one belongs to the user's project
(often a cloned repository, or a file the model itself wrote), so it is not
trusted: only the settings in :data:`PROJECT_DOTENV_SETTINGS` are taken from
it, and the provider keys (with HERMES_PROVIDER) only when the user's own
settings name no provider. Everything that could redirect traffic or widen
what the agent may do (base URLs, HERMES_APPROVALS, HERMES_WORKSPACE,
HERMES_HOME, the database, the web settings ...) is ignored there, and one
log line names what was ignored.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from hermes.errors import ConfigError

PROVIDER_NAMES = ("anthropic", "openai", "openrouter")

DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-5",
    "openrouter": "anthropic/claude-sonnet-4.6",
}

KEY_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}

# The SDKs' own base-URL variables keep working; HERMES_BASE_URL wins over them.
SDK_BASE_URL_VARIABLES = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
}

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

APPROVAL_MODES = ("ask", "auto", "deny")

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Config:
    """Every setting Hermes has, with its default. Build it with :meth:`from_env`."""

    home: Path
    workspace: Path
    database_url: str
    provider: str | None = None
    model: str = ""
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None

    # Limits of one turn.
    max_iterations: int = 25
    max_tokens: int = 8192
    # Provider connection.
    connect_timeout: float = 10.0
    stream_timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    # Tools.
    bash_timeout: float = 120.0
    tool_output_limit: int = 20_000
    read_file_limit: int = 256_000
    search_results_limit: int = 200
    # Curated profile memory, in characters per file.
    user_memory_limit: int = 4_000
    agent_memory_limit: int = 8_000
    # Skills offered in the system prompt per message.
    skills_in_prompt: int = 8
    # Core (turn integrity): the curator runs after a turn's answer; this
    # bounds how long it may take before it is given up.
    curator_timeout: float = 60.0

    # Context and budgets (long sessions): None means "from the model table" / "no limit".
    context_window: int | None = None
    compact_threshold: float = 0.7
    max_turn_cost_usd: float | None = None
    max_turn_seconds: float | None = None

    # Web dashboard.
    secret_key: str | None = field(default=None, repr=False)
    web_password: str | None = field(default=None, repr=False)
    web_allow_no_auth: bool = False
    web_enable_shell: bool = False
    web_enable_write: bool = False
    ratelimit_storage: str = "memory://"
    # Web dashboard gate (web-app): idle minutes before a login lapses; proxy hops trusted.
    web_session_idle_minutes: int = 720
    trusted_proxies: int = 0
    # Web turns (web-turns): stream heartbeats and length, how long finished turns stay replayable.
    web_heartbeat_seconds: float = 15.0
    web_stream_max_seconds: float = 810.0  # 13.5 min: under Railway's 15-minute request cap
    web_replay_seconds: float = 600.0
    web_replay_turns: int = 100

    # Approvals (issue 13): what happens to a dangerous tool call, and how long
    # a surface waits for the user's answer before it counts as a denial.
    approvals: str = "ask"
    approval_timeout: float = 300.0
    user_home: Path = field(default_factory=Path.home)
    # Deployment: daily database backups kept this many days (0 turns them off).
    backup_days: int = 7

    # Recall (memory search and skill selection): the semantic layer's embedder.
    embeddings: str = "local"  # local | fast | endpoint | off
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    embeddings_api_key: str | None = field(default=None, repr=False)

    @property
    def skills_dir(self) -> Path:
        return self.home / "skills"

    @property
    def memory_dir(self) -> Path:
        return self.home / "memory"

    @property
    def backups_dir(self) -> Path:
        return self.home / "backups"

    @property
    def history_file(self) -> Path:
        return self.home / "repl_history"

    def with_overrides(self, **changes) -> Config:
        return replace(self, **changes)

    def require_provider(self) -> None:
        """Raise a ConfigError that says what to set when no model can be reached."""
        if self.provider is None:
            raise ConfigError(
                "No model provider configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
                "OPENROUTER_API_KEY (or HERMES_PROVIDER=openai with HERMES_BASE_URL for a "
                "local server such as Ollama)."
            )
        if not self.api_key:
            raise ConfigError(
                f"{key_variable(self.provider)} is not set: set it to use the "
                f"{self.provider} provider (or point HERMES_BASE_URL at a local server)."
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, dotenv: bool = True) -> Config:
        """Read the configuration from ``environ`` (default: the process environment)."""
        if environ is None:
            if dotenv:
                _load_dotenv()
            environ = os.environ
        env = _Env(environ)

        home = Path(env.get("HERMES_HOME") or "~/.hermes").expanduser().resolve()
        workspace = Path(env.get("HERMES_WORKSPACE") or os.getcwd()).expanduser().resolve()
        # Never the generic DATABASE_URL: that one belongs to the user's projects.
        database_url = env.get("HERMES_DATABASE_URL") or f"sqlite:///{home / 'hermes.db'}"
        if not _URL.match(database_url):
            raise ConfigError(
                f"HERMES_DATABASE_URL must be a URL such as sqlite:////path/to/hermes.db, not "
                f"{database_url!r} (or unset it to use $HERMES_HOME/hermes.db)."
            )

        provider = _choose_provider(env)
        model = env.get("HERMES_MODEL") or (DEFAULT_MODELS.get(provider, "") if provider else "")
        base_url = None
        api_key = None
        if provider and provider not in PROVIDER_NAMES:
            # A plugin provider (entry point group hermes.providers): its class says
            # which variable holds its key and which model it defaults to.
            from hermes.providers.registry import provider_class

            plugin = provider_class(provider)
            model = env.get("HERMES_MODEL") or getattr(plugin, "default_model", "")
            base_url = env.get("HERMES_BASE_URL")
            variable = key_variable(provider)
            api_key = env.get(variable) if variable else "not-needed"
        elif provider:
            base_url = env.get("HERMES_BASE_URL") or env.get(
                SDK_BASE_URL_VARIABLES.get(provider, "")
            )
            if provider == "openrouter" and not base_url:
                base_url = OPENROUTER_BASE_URL
            api_key = env.get(KEY_VARIABLES[provider])
            if not api_key and base_url and base_url != OPENROUTER_BASE_URL:
                # Local servers (Ollama, llama.cpp, a proxy, ...) need no key,
                # but the SDKs insist on one.
                api_key = "not-needed"

        return cls(
            home=home,
            workspace=workspace,
            database_url=database_url,
            provider=provider,
            model=model,
            api_key=api_key,
            base_url=base_url,
            max_iterations=env.integer("HERMES_MAX_ITERATIONS", 25, minimum=1),
            bash_timeout=env.number("HERMES_BASH_TIMEOUT", 120.0),
            stream_timeout=env.number("HERMES_STREAM_TIMEOUT", 120.0),
            max_retries=env.integer("HERMES_MAX_RETRIES", 4, minimum=0, maximum=10),
            tool_output_limit=env.integer("HERMES_TOOL_OUTPUT_LIMIT", 20_000, minimum=1_000),
            user_memory_limit=env.integer("HERMES_USER_MEMORY_LIMIT", 4_000, minimum=200),
            agent_memory_limit=env.integer("HERMES_AGENT_MEMORY_LIMIT", 8_000, minimum=200),
            skills_in_prompt=env.integer("HERMES_SKILLS_IN_PROMPT", 8, minimum=0, maximum=50),
            # Context and budgets (long sessions).
            context_window=env.optional_integer("HERMES_CONTEXT_WINDOW", minimum=2_000),
            compact_threshold=env.fraction("HERMES_COMPACT_THRESHOLD", 0.7),
            max_turn_cost_usd=env.optional_number("HERMES_MAX_TURN_COST_USD"),
            max_turn_seconds=env.optional_number("HERMES_MAX_TURN_SECONDS"),
            curator_timeout=env.number("HERMES_CURATOR_TIMEOUT", 60.0),
            secret_key=env.get("FLASK_SECRET_KEY"),
            web_password=env.get("HERMES_WEB_PASSWORD"),
            web_allow_no_auth=env.flag("HERMES_WEB_ALLOW_NO_AUTH"),
            web_enable_shell=env.flag("HERMES_WEB_ENABLE_SHELL"),
            web_enable_write=env.flag("HERMES_WEB_ENABLE_WRITE"),
            ratelimit_storage=env.get("HERMES_RATELIMIT_STORAGE") or "memory://",
            approvals=env.choice("HERMES_APPROVALS", APPROVAL_MODES, "ask"),
            approval_timeout=env.number("HERMES_APPROVAL_TIMEOUT", 300.0),
            # Web dashboard gate (web-app).
            web_session_idle_minutes=env.integer(
                "HERMES_WEB_SESSION_IDLE_MINUTES", 720, minimum=1, maximum=60 * 24 * 30
            ),
            trusted_proxies=env.integer("HERMES_TRUSTED_PROXIES", 0, minimum=0, maximum=10),
            web_heartbeat_seconds=env.number("HERMES_WEB_HEARTBEAT_SECONDS", 15.0),
            web_stream_max_seconds=env.number("HERMES_WEB_STREAM_MAX_SECONDS", 810.0),
            web_replay_seconds=env.number("HERMES_WEB_REPLAY_SECONDS", 600.0),
            web_replay_turns=env.integer("HERMES_WEB_REPLAY_TURNS", 100, minimum=0),
            backup_days=env.integer("HERMES_BACKUP_DAYS", 7, minimum=0, maximum=3650),
            **_recall_settings(env),
        )


# Never handed to a child process: run_bash's commands see the rest of the
# environment, the user's own DATABASE_URL included (the project's tests need it).
# HERMES_DATABASE_URL and HERMES_RATELIMIT_STORAGE are URLs that may carry a
# password; every plugin provider's key variable is added by child_environment.
SECRET_VARIABLES = (
    *KEY_VARIABLES.values(),
    "FLASK_SECRET_KEY",
    "HERMES_WEB_PASSWORD",
    "HERMES_EMBEDDINGS_API_KEY",
    "HERMES_DATABASE_URL",
    "HERMES_RATELIMIT_STORAGE",
)

# What a project's .env (in the current folder) may set for Hermes: an allow-list,
# so a setting added later is refused there until someone decides it is harmless.
# These only tune limits and the model id; none moves traffic elsewhere or lets
# the agent do more than the user allowed.
PROJECT_DOTENV_SETTINGS = (
    "HERMES_MODEL",
    "HERMES_MAX_ITERATIONS",
    "HERMES_BASH_TIMEOUT",
    "HERMES_STREAM_TIMEOUT",
    "HERMES_MAX_RETRIES",
    "HERMES_TOOL_OUTPUT_LIMIT",
    "HERMES_USER_MEMORY_LIMIT",
    "HERMES_AGENT_MEMORY_LIMIT",
    "HERMES_SKILLS_IN_PROMPT",
    "HERMES_CONTEXT_WINDOW",
    "HERMES_COMPACT_THRESHOLD",
    "HERMES_MAX_TURN_COST_USD",
    "HERMES_MAX_TURN_SECONDS",
    "HERMES_CURATOR_TIMEOUT",
    "HERMES_APPROVAL_TIMEOUT",
    "HERMES_EMBEDDINGS",
    "HERMES_EMBEDDINGS_MODEL",
)
# Taken from a project's .env only when the user's own settings (real environment
# and $HERMES_HOME/.env) name no provider: otherwise a cloned repository could
# move the user's conversations to another provider, or to its own account.
PROJECT_DOTENV_PROVIDER = ("HERMES_PROVIDER", *KEY_VARIABLES.values())
# Any of these set by the user means "the user chose a provider".
PROVIDER_CHOICE_VARIABLES = (
    "HERMES_PROVIDER",
    "HERMES_BASE_URL",
    *KEY_VARIABLES.values(),
    *SDK_BASE_URL_VARIABLES.values(),
)


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the model's commands: ours minus Hermes' secrets, never interactive."""
    source = os.environ if environ is None else environ
    hidden = {*SECRET_VARIABLES, *plugin_key_variables()}
    env = {k: v for k, v in source.items() if k not in hidden}
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "TERM": "dumb"})
    return env


@cache
def plugin_key_variables() -> frozenset[str]:
    """The key variables of every installed plugin provider (a plugin that cannot be
    loaded is skipped here: choosing it reports why)."""
    from hermes.providers.registry import provider_class, provider_names

    found = set()
    for name in provider_names():
        if name in PROVIDER_NAMES:
            continue
        try:
            variable = getattr(provider_class(name), "key_variable", None)
        except ConfigError:
            continue
        if isinstance(variable, str) and variable:
            found.add(variable)
    return frozenset(found)


def key_variable(provider: str | None) -> str | None:
    """The variable holding ``provider``'s API key (None: a plugin that needs none)."""
    if provider is None:
        return None
    if provider in KEY_VARIABLES:
        return KEY_VARIABLES[provider]
    from hermes.providers.registry import provider_class

    return getattr(provider_class(provider), "key_variable", None)


EMBEDDING_CHOICES = ("local", "fast", "endpoint", "off")


def _recall_settings(env: _Env) -> dict:
    """HERMES_EMBEDDINGS (local | endpoint | off) and the endpoint's URL, model and key."""
    url = env.get("HERMES_EMBEDDINGS_URL")
    choice = (env.get("HERMES_EMBEDDINGS") or ("endpoint" if url else "local")).lower()
    if choice not in EMBEDDING_CHOICES:
        raise ConfigError(
            f"HERMES_EMBEDDINGS must be one of {', '.join(EMBEDDING_CHOICES)}, not {choice!r}."
        )
    if url and not _URL.match(url):
        raise ConfigError(
            f"HERMES_EMBEDDINGS_URL must be a URL such as http://localhost:11434/v1, not {url!r}."
        )
    return {
        "embeddings": choice,
        "embeddings_url": url,
        "embeddings_model": env.get("HERMES_EMBEDDINGS_MODEL"),
        "embeddings_api_key": env.get("HERMES_EMBEDDINGS_API_KEY"),
    }


def _choose_provider(env: _Env) -> str | None:
    chosen = env.get("HERMES_PROVIDER")
    if chosen:
        chosen = chosen.strip().lower()
        if chosen not in PROVIDER_NAMES:
            # Not built in: a provider plugin may have registered it.
            from hermes.providers.registry import provider_names

            registered = provider_names()
            if chosen not in registered:
                valid = ", ".join(registered)
                raise ConfigError(f"Unknown HERMES_PROVIDER {chosen!r}: use one of {valid}.")
        return chosen
    # The provider whose key is set; then the one whose SDK base URL is set.
    for name in PROVIDER_NAMES:
        if env.get(KEY_VARIABLES[name]):
            return name
    for name, variable in SDK_BASE_URL_VARIABLES.items():
        if env.get(variable):
            return name
    if env.get("HERMES_BASE_URL"):
        return "openai"
    return None


def _load_dotenv() -> None:
    """Fill os.environ from the .env files; a variable already set is never replaced.

    ``$HERMES_HOME/.env`` first (whole), then the project's ``./.env`` (only
    what :func:`project_dotenv_allows` lets through); the names refused there
    are logged once per process, never their values.
    """
    from dotenv import dotenv_values

    home = Path(os.environ.get("HERMES_HOME") or "~/.hermes").expanduser()
    settings = home / ".env"
    if settings.is_file():
        for name, value in dotenv_values(settings).items():
            if value is not None:
                os.environ.setdefault(name, value)
    project = Path.cwd() / ".env"
    if not project.is_file() or (settings.is_file() and settings.resolve() == project.resolve()):
        return
    user_chose_provider = any(os.environ.get(name) for name in PROVIDER_CHOICE_VARIABLES)
    ignored = []
    for name, value in dotenv_values(project).items():
        if value is None:
            continue
        if not project_dotenv_allows(name, user_chose_provider=user_chose_provider):
            if is_hermes_variable(name):
                ignored.append(name)
        elif name not in os.environ:
            os.environ[name] = value
    _report_ignored(project, ignored)


def project_dotenv_allows(name: str, *, user_chose_provider: bool) -> bool:
    """True for the variables a project's .env may set for Hermes (see the module docstring)."""
    if name in PROJECT_DOTENV_SETTINGS:
        return True
    if user_chose_provider:
        return False
    return name in PROJECT_DOTENV_PROVIDER or name in plugin_key_variables()


def is_hermes_variable(name: str) -> bool:
    """True for Hermes' own variables and the provider ones (the project's own are not ours)."""
    return (
        name.startswith("HERMES_")
        or name in PROVIDER_CHOICE_VARIABLES
        or name == "FLASK_SECRET_KEY"
        or name in plugin_key_variables()
    )


_reported: set[tuple[Path, tuple[str, ...]]] = set()


def _report_ignored(project: Path, ignored: list[str]) -> None:
    """One warning naming the variables refused from the project's .env (names only)."""
    key = (project, tuple(sorted(ignored)))
    if not ignored or key in _reported:
        return
    _reported.add(key)
    logging.getLogger("hermes.config").warning(
        "ignored in %s (a project's .env may not set them; put them in $HERMES_HOME/.env "
        "or the environment): %s",
        project,
        ", ".join(key[1]),
    )


def _float(raw: str) -> float:
    """``raw`` as a float; NaN when it is not a number (callers reject NaN with their message)."""
    try:
        return float(raw)
    except ValueError:
        return math.nan


class _Env:
    """Typed reads with error messages that name the variable."""

    def __init__(self, environ: Mapping[str, str]):
        self.environ = environ

    def get(self, name: str) -> str | None:
        value = self.environ.get(name) if name else None
        return value.strip() if value and value.strip() else None

    def integer(
        self, name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
    ) -> int:
        raw = self.get(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a whole number, not {raw!r}.") from None
        if minimum is not None and value < minimum:
            raise ConfigError(f"{name} must be at least {minimum}, not {value}.")
        if maximum is not None and value > maximum:
            raise ConfigError(f"{name} must be at most {maximum}, not {value}.")
        return value

    def number(self, name: str, default: float) -> float:
        raw = self.get(name)
        if raw is None:
            return default
        value = _float(raw)
        if not math.isfinite(value):
            raise ConfigError(f"{name} must be a number of seconds, not {raw!r}.")
        if value <= 0:
            raise ConfigError(f"{name} must be more than 0, not {raw}.")
        return value

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        raw = self.get(name)
        if raw is None:
            return default
        value = raw.lower()
        if value not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, not {raw!r}.")
        return value

    def optional_integer(self, name: str, *, minimum: int) -> int | None:
        if self.get(name) is None:
            return None
        return self.integer(name, 0, minimum=minimum)

    def optional_number(self, name: str) -> float | None:
        raw = self.get(name)
        if raw is None:
            return None
        value = _float(raw)
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{name} must be a number above 0, not {raw!r} (or unset it).")
        return value

    def fraction(self, name: str, default: float) -> float:
        raw = self.get(name)
        if raw is None:
            return default
        value = _float(raw)
        if not 0.2 <= value <= 0.95:
            raise ConfigError(f"{name} must be a fraction between 0.2 and 0.95, not {raw!r}.")
        return value

    def flag(self, name: str) -> bool:
        raw = (self.environ.get(name) or "").strip().lower()
        if raw in TRUE_WORDS:
            return True
        if raw in FALSE_WORDS:
            return False
        raise ConfigError(f"{name} must be true or false, not {raw!r}.")
