"""The dashboard: a Flask app built by :func:`create_app`, one blueprint per area.

``auth`` (login, logout, the gate), ``pages`` (the HTML views), ``sessions``,
``memory``, ``skills`` and ``health`` (JSON APIs), and ``turns`` (live turns
and their streams, from ``web.turns``). All of them share one
:class:`hermes.runtime.Runtime`, built here and kept at
``app.extensions["hermes.runtime"]``.

The app fails closed: without FLASK_SECRET_KEY, or without
HERMES_WEB_PASSWORD unless HERMES_WEB_ALLOW_NO_AUTH=true, ``create_app``
raises a ConfigError that says what to set (``wsgi.py`` prints it as one line).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from hermes.allocator import tune_malloc
from hermes.blas import single_blas_thread
from hermes.config import Config
from hermes.errors import ConfigError
from hermes.privacy import hide_process

ROOT = Path(__file__).resolve().parent.parent

# Request bodies larger than this answer 413 (a skill zip is the largest thing we accept).
MAX_CONTENT_LENGTH = 8 * 1024 * 1024
MIN_SECRET_KEY_LENGTH = 16

log = logging.getLogger("hermes.web")


def asset_folder(name: str) -> Path:
    """``templates`` or ``static``: inside this package as ``_templates``/``_static`` when
    installed from a wheel (see pyproject.toml), else beside it in the checkout."""
    packaged = Path(__file__).resolve().parent / f"_{name}"
    return packaged if packaged.is_dir() else ROOT / name


def check_startup(config: Config) -> None:
    """Refuse to serve without a secret key, or without a password unless that is explicit."""
    if not config.secret_key:
        raise ConfigError(
            "FLASK_SECRET_KEY is not set: set it to a long random string (python3 -c "
            "'import secrets; print(secrets.token_hex(32))'), or use `hermes web`, which "
            "creates one for local use."
        )
    if len(config.secret_key) < MIN_SECRET_KEY_LENGTH:
        raise ConfigError(
            f"FLASK_SECRET_KEY is too short: use at least {MIN_SECRET_KEY_LENGTH} random "
            "characters (python3 -c 'import secrets; print(secrets.token_hex(32))')."
        )
    if not config.web_password and not config.web_allow_no_auth:
        raise ConfigError(
            "HERMES_WEB_PASSWORD is not set: set it to the dashboard's password, or set "
            "HERMES_WEB_ALLOW_NO_AUTH=true to run without one (only behind your own login)."
        )


def create_app(config: Config | None = None) -> Flask:
    """Build the dashboard for ``config`` (default: the environment)."""
    from hermes.runtime import Runtime
    from web import approvals, auth, errors, health, memory, pages, security, sessions, skills
    from web.context import IdConverter

    hide_process()  # the model's commands must not read our keys from /proc/<pid>/environ
    tune_malloc()  # a server that runs for weeks must not creep up in memory
    single_blas_thread()  # small matrix products; a BLAS pool would only spin
    config = config or Config.from_env()
    check_startup(config)

    app = Flask(
        __name__,
        template_folder=str(asset_folder("templates")),
        static_folder=str(asset_folder("static")),
        static_url_path="/static",
    )
    app.secret_key = config.secret_key
    app.config["MAX_CONTENT_LENGTH"] = MAX_CONTENT_LENGTH
    app.json.sort_keys = False
    app.url_map.converters["id"] = IdConverter
    if config.trusted_proxies:
        hops = config.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops, x_port=hops)

    runtime = Runtime(config, surface="web")
    app.extensions["hermes.runtime"] = runtime
    runtime.store  # open and upgrade the database now: a broken one fails the start  # noqa: B018

    errors.register(app)
    security.init_app(app)
    auth.init_app(app, config)
    for module in (pages, sessions, memory, skills):
        app.register_blueprint(module.bp)
    approvals.init_app(app, runtime)  # before any turn builds the shared agent
    health.init_app(app)
    _init_upkeep(app, config, runtime)
    _init_turns(app, runtime)
    return app


def _init_upkeep(app: Flask, config: Config, runtime) -> None:
    """Warn when the data would not survive a redeploy; keep daily backups."""
    from hermes.deploy import storage_warnings
    from hermes.store.backups import DailyBackups

    warnings = storage_warnings(config)
    for warning in warnings:
        log.warning("%s", warning)
        # Also on stderr: the server's own log (Railway's, journald's, docker logs).
        print(f"hermes: warning: {warning}", file=sys.stderr, flush=True)
    app.extensions["hermes.storage_warnings"] = warnings
    backups = DailyBackups(runtime.store.engine, config.backups_dir, keep_days=config.backup_days)
    app.extensions["hermes.backups"] = backups.start()


def _init_turns(app: Flask, runtime) -> None:
    """Mount the live-turn pool and its routes (``web.turns``) when that module is present."""
    try:
        from web import turns
    except ModuleNotFoundError as exc:
        if exc.name != "web.turns":
            raise
        log.warning("web.turns is missing: the dashboard runs without live turns")
        return
    turns.init_app(app, runtime)
