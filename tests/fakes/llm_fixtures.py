"""Pytest fixtures around the fake LLM server (registered in tests/conftest.py).

- ``fake_llm``: a started :class:`~tests.fakes.llm_server.FakeLLM`, stopped after the test.
- ``wire``: parametrized over ``"anthropic"`` and ``"openai"``; a test that takes it
  runs once per wire format.
- ``fake_provider``: ``fake_provider(wire, **settings)`` builds the real provider
  pointed at ``fake_llm`` with fast retry settings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.fakes.llm_server import DEFAULT_MODELS, FakeLLM

WIRES = ("anthropic", "openai")

# Quick enough for tests, slow enough that a stall is unmistakable.
FAST_SETTINGS = {
    "connect_timeout": 2.0,
    "stream_timeout": 2.0,
    "max_retries": 2,
    "retry_base_delay": 0.01,
    "retry_max_delay": 0.05,
}


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    fake = FakeLLM().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture(params=WIRES)
def wire(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def fake_provider(fake_llm: FakeLLM) -> Callable[..., object]:
    """Factory: the named provider talking to ``fake_llm``; keyword arguments override settings."""
    from hermes.providers.base import ProviderSettings
    from hermes.providers.registry import provider_class

    def make(provider: str = "anthropic", **overrides: object):
        values = {
            "model": DEFAULT_MODELS[provider],
            "api_key": "test-key",
            "base_url": fake_llm.base_url(provider),
            **FAST_SETTINGS,
            **overrides,
        }
        return provider_class(provider)(ProviderSettings(**values))

    return make
