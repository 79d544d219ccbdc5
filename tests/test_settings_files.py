"""Whose settings are whose: Hermes' own .env versus the user's project .env.

The agent works inside the user's project, whose ``.env`` holds the project's
``DATABASE_URL`` and secrets. Driven through the real ``hermes`` command.
"""

from __future__ import annotations

import json
import sqlite3

from tests.helpers import clean_environ, run_hermes


def test_a_project_env_never_takes_over_hermes_database(fake_llm, hermes_home, workspace):
    # The user's project: its .env names its own database and a secret of its own.
    (workspace / ".env").write_text(
        "DATABASE_URL=sqlite:///app.db\nSECRET_KEY=project-secret\nHERMES_MODEL=gpt-from-project\n"
    )
    env = clean_environ(
        **fake_llm.env("openai"),
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_MAX_RETRIES="0",
    )
    fake_llm.reply("Hello from the model.")
    result = run_hermes(["chat", "-q", "hi"], env=env, cwd=workspace)

    assert result.returncode == 0, result.stderr
    assert not (workspace / "app.db").exists()
    assert (hermes_home / "hermes.db").exists()
    # Hermes' own variables are still taken from the project's .env.
    assert fake_llm.last_request.json["model"] == "gpt-from-project"


def test_a_postgres_database_url_in_the_environment_does_not_stop_hermes(
    fake_llm, hermes_home, workspace
):
    env = clean_environ(
        **fake_llm.env("openai"),
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        DATABASE_URL="postgresql://app@db.internal/app",
    )
    fake_llm.reply("Still works.")
    result = run_hermes(["chat", "-q", "hi"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert "Still works." in result.stdout


def test_hermes_database_url_chooses_hermes_own_database(fake_llm, hermes_home, workspace):
    elsewhere = workspace.parent / "elsewhere.db"
    env = clean_environ(
        **fake_llm.env("openai"),
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        HERMES_DATABASE_URL=f"sqlite:///{elsewhere}",
    )
    fake_llm.reply("Stored elsewhere.")
    assert run_hermes(["chat", "-q", "hi"], env=env, cwd=workspace).returncode == 0
    with sqlite3.connect(elsewhere) as db:
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    assert not (hermes_home / "hermes.db").exists()


def test_the_home_env_is_the_settings_file(fake_llm, hermes_home, workspace):
    (hermes_home / ".env").write_text(f"HERMES_MODEL=gpt-from-home\nHERMES_WORKSPACE={workspace}\n")
    env = clean_environ(**fake_llm.env("openai"), HERMES_HOME=str(hermes_home))
    fake_llm.reply("ok")
    result = run_hermes(["chat", "-q", "hi"], env=env, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert fake_llm.last_request.json["model"] == "gpt-from-home"


def test_run_bash_keeps_the_users_variables_and_drops_only_hermes_secrets(
    fake_llm, hermes_home, workspace
):
    env = clean_environ(
        **fake_llm.env("openai", api_key="sk-provider-secret"),
        HERMES_HOME=str(hermes_home),
        HERMES_WORKSPACE=str(workspace),
        DATABASE_URL="sqlite:///app.db",
        FLASK_SECRET_KEY="flask-secret",
        HERMES_WEB_PASSWORD="web-secret",
    )
    command = (
        'echo "db=$DATABASE_URL"; echo "key=${OPENAI_API_KEY:-gone}"; '
        'echo "flask=${FLASK_SECRET_KEY:-gone}"; echo "web=${HERMES_WEB_PASSWORD:-gone}"'
    )
    fake_llm.reply(tool_calls=[("run_bash", {"command": command})])
    fake_llm.reply("Done.")
    result = run_hermes(["chat", "-q", "run it", "--json"], env=env, cwd=workspace)

    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    output = next(e for e in events if e["type"] == "tool_result")["output"]
    assert "db=sqlite:///app.db" in output
    assert "key=gone" in output and "flask=gone" in output and "web=gone" in output
