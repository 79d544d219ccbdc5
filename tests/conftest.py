"""Shared fixtures: a fresh HERMES_HOME, workspace and Config for every test."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.config import Config

pytest_plugins = ["tests.fakes.llm_fixtures", "tests.fixtures.store", "tests.fixtures.skills"]


@pytest.fixture
def hermes_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ws


@pytest.fixture
def make_config(hermes_home: Path, workspace: Path):
    """Build a Config on the test's own home and workspace; keyword arguments override fields."""

    def make(**overrides) -> Config:
        base = Config(
            home=hermes_home,
            workspace=workspace.resolve(),
            database_url=f"sqlite:///{hermes_home / 'hermes.db'}",
            retry_base_delay=0.01,
            retry_max_delay=0.05,
            bash_timeout=10.0,
            stream_timeout=10.0,
        )
        return base.with_overrides(**overrides)

    return make


@pytest.fixture
def config(make_config) -> Config:
    return make_config()
