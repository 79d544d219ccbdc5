"""`hermes web [--host H] [--port P]`: the dashboard for local use.

Made for the first minutes with Hermes: no FLASK_SECRET_KEY needed (one is
created in HERMES_HOME/secret_key, 0600, and reused), and with no
HERMES_WEB_PASSWORD it listens on 127.0.0.1 only and prints a one-time login
link, the way Jupyter does. Production uses ``gunicorn wsgi:app`` instead,
which stays fail-closed.

The web package (Flask) is imported only when this command runs: the agent
core never imports Flask.
"""

from __future__ import annotations

import os
import secrets
import signal
from pathlib import Path

import click

from hermes.errors import ConfigError

SECRET_KEY_FILE = "secret_key"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8000


def ensure_secret_key(home: Path) -> str:
    """The secret key kept in ``home/secret_key``; created (0600) on first use."""
    path = home / SECRET_KEY_FILE
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_text(encoding="utf-8").strip()
        if len(key) >= 32:
            os.chmod(path, 0o600)
            return key
        raise ConfigError(
            f"{path} does not hold a usable secret key: delete it and `hermes web` makes a new one."
        ) from None
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")
    return key


@click.command()
@click.option("--host", default=None, help="Address to listen on (default 127.0.0.1).")
@click.option(
    "--port",
    default=DEFAULT_PORT,
    type=click.IntRange(0, 65535),
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
def web(host: str | None, port: int) -> None:
    """Serve the dashboard for local use (production: gunicorn wsgi:app)."""
    from hermes.config import Config

    config = Config.from_env()
    if not config.secret_key:
        config = config.with_overrides(secret_key=ensure_secret_key(config.home))
    one_time_link = not config.web_password
    if one_time_link:
        if host is not None and host not in LOCAL_HOSTS:
            raise ConfigError(
                f"Without HERMES_WEB_PASSWORD `hermes web` listens on 127.0.0.1 only; set a "
                f"password to listen on {host}."
            )
        config = config.with_overrides(web_allow_no_auth=True)
    host = host or "127.0.0.1"
    _serve(config, host, port, one_time_link)


def _serve(config, host: str, port: int, one_time_link: bool) -> None:
    from web import create_app
    from web.auth import issue_login_token

    app = create_app(config)
    token = issue_login_token(app) if one_time_link else None
    server = _make_server(host, port, app)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{server.server_port}/"
    if token:
        click.echo(
            f"Hermes dashboard: open this link to log in (it works once):\n  {url}login?token={token}"
        )
    else:
        click.echo(f"Hermes dashboard on {url} (log in with HERMES_WEB_PASSWORD)")
    click.echo("Press Ctrl+C to stop.", err=True)
    signal.signal(signal.SIGTERM, lambda *_: _stop())
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        pool = app.extensions.get("hermes.pool")
        if pool is not None and hasattr(pool, "shutdown"):
            pool.shutdown(timeout=10)
        app.extensions["hermes.runtime"].close()


def _stop() -> None:
    raise KeyboardInterrupt


def _make_server(host: str, port: int, app):
    """Werkzeug's threaded server (one thread per connection, so streams don't block others).

    Request lines are logged without their query string, so the one-time login
    token never reaches a log."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Handler(WSGIRequestHandler):
        def log_request(self, code="-", size="-") -> None:
            path = self.path.split("?", 1)[0]
            self.log("info", '"%s %s" %s', self.command, path, getattr(code, "value", code))

    try:
        return make_server(host, port, app, threaded=True, request_handler=Handler)
    except OSError as exc:
        raise ConfigError(
            f"Cannot listen on {host}:{port} ({exc.strerror or exc}): pass another --port."
        ) from None
