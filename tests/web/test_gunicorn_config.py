"""gunicorn.conf.py as gunicorn itself reads it (``--print-config``), from the Procfile's line."""

from __future__ import annotations

import subprocess

from tests.web.gunicorn_server import (
    PASSWORD,
    ROOT,
    SECRET_KEY,
    procfile_command,
    server_environ,
)


def effective_settings(**env: str) -> dict[str, str]:
    command = procfile_command()
    assert command[:3] == ["gunicorn", "--config", "gunicorn.conf.py"] and command[-1] == "wsgi:app"
    done = subprocess.run(
        [*command[:-1], "--print-config", command[-1]],
        cwd=ROOT,
        env=server_environ(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings = {}
    for line in done.stdout.splitlines():
        name, sep, value = line.partition("=")
        if sep:
            settings[name.strip()] = value.strip()
    return settings


def test_one_gthread_worker_with_threads_for_many_streams_bound_to_port(tmp_path):
    # A platform's WEB_CONCURRENCY must not add processes: live turns are in one process.
    settings = effective_settings(
        PORT="5123",
        WEB_CONCURRENCY="4",
        FLASK_SECRET_KEY=SECRET_KEY,
        HERMES_WEB_PASSWORD=PASSWORD,
        HERMES_HOME=str(tmp_path),
    )
    assert settings["workers"] == "1"
    assert settings["worker_class"] == "gthread"
    assert int(settings["threads"]) >= 2 * 32  # 32 streams plus ordinary requests
    assert settings["bind"] == "['0.0.0.0:5123']"
    assert int(settings["keepalive"]) > 60  # above Railway's proxy keep-alive
    assert int(settings["graceful_timeout"]) >= 30
    assert settings["max_requests"] == "0"  # recycling would kill running turns
    assert settings["preload_app"] == "False"
