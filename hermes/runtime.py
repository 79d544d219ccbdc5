"""Everything a surface (CLI, REPL, web) needs, built lazily from one Config.

A ``Runtime`` owns the store, the skills, the profile memory and the provider,
and hands out :class:`~hermes.agent.loop.Agent` objects wired to them. Nothing
is opened until first used, so ``hermes search`` never builds a provider and
``hermes chat`` fails on a missing key before it touches the database.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Literal

from hermes.config import Config
from hermes.errors import ConfigError

if TYPE_CHECKING:
    from hermes.agent.loop import Agent
    from hermes.learning.curator import Curator
    from hermes.profile import ProfileMemory
    from hermes.providers.base import Provider
    from hermes.skills import SkillManager
    from hermes.store import Store
    from hermes.tools.registry import ToolRegistry

Surface = Literal["cli", "web"]

# Session summaries are a courtesy: they must never make a command hang.
SUMMARY_STREAM_TIMEOUT = 20.0


class Runtime:
    def __init__(self, config: Config, *, surface: Surface = "cli"):
        from hermes.logs import log_to_file

        log_to_file(config.home)
        self.config = config
        self.surface = surface
        self._model: str | None = None

    @cached_property
    def store(self) -> Store:
        from hermes.store import Store

        store = Store.open(self.config)
        store.embedder = self.embedder
        # Recall: new (and not yet embedded) messages get their vectors in the background.
        store.start_indexing()
        return store

    @cached_property
    def skills(self) -> SkillManager:
        from hermes.skills import SkillManager

        return SkillManager(self.config.skills_dir, embedder=self._embedder("skills"))

    @cached_property
    def embedder(self):
        """Recall's Embedder for memory search (None when HERMES_EMBEDDINGS=off)."""
        return self._embedder("memory")

    def _embedder(self, purpose):
        from hermes.embeddings import EmbeddingError, make_embedder

        try:
            return make_embedder(self.config, purpose)
        except EmbeddingError as exc:
            import logging

            logging.getLogger(__name__).warning("semantic recall is off: %s", exc)
            return None

    @cached_property
    def profile(self) -> ProfileMemory:
        from hermes.profile import ProfileMemory

        return ProfileMemory(
            self.config.memory_dir,
            user_limit=self.config.user_memory_limit,
            agent_limit=self.config.agent_memory_limit,
        )

    @property
    def model(self) -> str:
        return self._model or self.config.model

    def set_model(self, model: str) -> None:
        """Switch the model for the turns that follow (the REPL's /model)."""
        self._model = model
        self.__dict__.pop("provider", None)
        self.__dict__.pop("curator", None)

    @cached_property
    def provider(self) -> Provider:
        from hermes.providers.registry import create_provider

        return create_provider(self.config, model=self.model)

    @cached_property
    def curator(self) -> Curator:
        from hermes.learning.curator import Curator

        return Curator(self.provider, self.skills)

    def tools(self) -> ToolRegistry:
        """The tool set of this surface: the web leaves out shell and write tools unless enabled."""
        from hermes.tools import all_tools

        registry = all_tools()
        if self.surface == "web":
            if not self.config.web_enable_shell:
                registry = registry.without("shell")
            if not self.config.web_enable_write:
                registry = registry.without("write")
        return registry

    def agent(self) -> Agent:
        from hermes.agent.loop import Agent

        provider = self.provider  # fail on a missing key before touching anything else
        if not self.config.workspace.is_dir():
            raise ConfigError(
                f"HERMES_WORKSPACE {self.config.workspace} is not an existing folder: create it "
                "or point HERMES_WORKSPACE at the folder the agent may work in."
            )
        return Agent(
            config=self.config,
            provider=provider,
            store=self.store,
            tools=self.tools(),
            skills=self.skills,
            profile=self.profile,
            curator=self.curator,
        )

    def summarize_session(self, session_id: int) -> str | None:
        """Write the session's note-to-self when it closes; quietly skip what isn't worth it.

        A session with a single exchange is summarized by its title (the question
        itself), so one-shot commands cost no extra model call.
        """
        from hermes.learning.curator import Curator
        from hermes.providers.registry import create_provider

        history = self.store.history(session_id)
        if sum(1 for m in history if m.role == "user") < 2:
            return None
        quick = self.config.with_overrides(max_retries=0, stream_timeout=SUMMARY_STREAM_TIMEOUT)
        summary = Curator(create_provider(quick, model=self.model), self.skills).summarize_session(
            history
        )
        if summary:
            self.store.update_session(session_id, summary=summary)
        return summary

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()
