"""Everything a surface (CLI, REPL, web) needs, built lazily from one Config.

A ``Runtime`` owns the store, the skills, the profile memory and the provider,
and hands out :class:`~hermes.agent.loop.Agent` objects wired to them. Nothing
is opened until first used, so ``hermes search`` never builds a provider and
``hermes chat`` fails on a missing key before it touches the database.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeVar

from hermes.config import Config
from hermes.errors import ConfigError

if TYPE_CHECKING:
    from hermes.agent.loop import Agent
    from hermes.approvals.gate import Approvals
    from hermes.learning.curator import Curator
    from hermes.profile import ProfileMemory
    from hermes.providers.base import Provider
    from hermes.skills import SkillManager
    from hermes.store import Store
    from hermes.tools.registry import ToolRegistry

Surface = Literal["cli", "web"]
_NO_EMBEDDER = object()  # a built "no embedder" (HERMES_EMBEDDINGS=off), not "not built yet"
T = TypeVar("T")

# Session summaries are a courtesy: they must never make a command hang.
SUMMARY_STREAM_TIMEOUT = 20.0


class Runtime:
    """One per process, shared by all its threads (the web server's included).

    Every part is built once, on first use, under a lock: one store (so
    migrations run once), one skills manager, one tool registry, one provider
    per model. A session's model is stored with the session (``/model``
    changes it there), so no thread's choice changes another's.
    """

    def __init__(self, config: Config, *, surface: Surface = "cli"):
        from hermes.logs import log_to_file
        from hermes.privacy import secure_home

        log_to_file(config.home)
        secure_home(config.home)
        self.config = config
        self.surface = surface
        self._lock = threading.RLock()
        self._parts: dict[str, object] = {}
        self._providers: dict[str, Provider] = {}
        # The surface's approval policy for dangerous tool calls (the web sets one
        # up in web.approvals); agent() uses it when the caller brings none.
        self.approvals: Approvals | None = None

    def _part(self, name: str, build: Callable[[], T]) -> T:
        """The part called ``name``, built exactly once however many threads ask."""
        part = self._parts.get(name)
        if part is None:
            with self._lock:
                part = self._parts.get(name)
                if part is None:
                    part = self._parts[name] = build()
        return part  # type: ignore[return-value]

    @property
    def store(self) -> Store:
        from hermes.store import Store

        def open_store():
            store = Store.open(self.config)
            store.embedder = self.embedder
            # Recall: new (and not yet embedded) messages get their vectors in the background.
            store.start_indexing()
            return store

        return self._part("store", open_store)

    @property
    def skills(self) -> SkillManager:
        from hermes.skills import SkillManager

        # Uses are counted in the store, opened only when a skill is first used.
        return self._part(
            "skills",
            lambda: SkillManager(
                self.config.skills_dir, uses=_StoreUses(self), embedder=self._embedder("skills")
            ),
        )

    @property
    def embedder(self):
        """Recall's Embedder for memory search (None when HERMES_EMBEDDINGS=off)."""
        return self._embedder("memory")

    def _embedder(self, purpose):
        """The embedder for memory search or skill selection, built once (None when off)."""
        from hermes.embeddings import EmbeddingError, make_embedder

        def build():
            try:
                return make_embedder(self.config, purpose) or _NO_EMBEDDER
            except EmbeddingError as exc:
                import logging

                logging.getLogger(__name__).warning("semantic recall is off: %s", exc)
                return _NO_EMBEDDER

        found = self._part(f"embedder:{purpose}", build)
        return None if found is _NO_EMBEDDER else found

    @property
    def profile(self) -> ProfileMemory:
        from hermes.profile import ProfileMemory

        return self._part(
            "profile",
            lambda: ProfileMemory(
                self.config.memory_dir,
                user_limit=self.config.user_memory_limit,
                agent_limit=self.config.agent_memory_limit,
            ),
        )

    @property
    def model(self) -> str:
        """The model of new sessions (each session keeps its own)."""
        return self.config.model

    @property
    def provider(self) -> Provider:
        """The provider for the configured model."""
        return self.provider_for(self.model)

    def provider_for(self, model: str | None) -> Provider:
        """The provider for ``model`` (built once per model)."""
        from hermes.providers.registry import create_provider

        model = model or self.model
        provider = self._providers.get(model)
        if provider is None:
            with self._lock:
                provider = self._providers.get(model)
                if provider is None:
                    provider = self._providers[model] = create_provider(self.config, model=model)
        return provider

    @property
    def curator(self) -> Curator:
        from hermes.learning.curator import Curator

        return self._part("curator", lambda: Curator(self.provider, self.skills))

    def tools(self) -> ToolRegistry:
        """The tool set of this surface: the web leaves out shell and write tools unless enabled."""
        return self._part("tools", self._build_tools)

    def _build_tools(self) -> ToolRegistry:
        from hermes.tools import all_tools

        registry = all_tools()
        if self.surface == "web":
            if not self.config.web_enable_shell:
                registry = registry.without("shell")
            if not self.config.web_enable_write:
                registry = registry.without("write")
        return registry

    def agent(self, approvals: Approvals | None = None) -> Agent:
        """The agent; it keeps no per-turn state, so every thread shares it.

        ``approvals`` decides on dangerous tool calls: a surface passes its own
        (the REPL, chat -q), or sets :attr:`approvals` once (the web); with
        neither, nobody is there to ask and they are denied.
        """
        provider = self.provider  # fail on a missing key before touching anything else
        if not self.config.workspace.is_dir():
            raise ConfigError(
                f"HERMES_WORKSPACE {self.config.workspace} is not an existing folder: create it "
                "or point HERMES_WORKSPACE at the folder the agent may work in."
            )
        if approvals is not None:
            return self._build_agent(provider, approvals)  # cheap: every part is shared
        return self._part("agent", lambda: self._build_agent(provider, self.approvals))

    def _build_agent(self, provider: Provider, approvals: Approvals | None) -> Agent:
        from hermes.agent.loop import Agent

        return Agent(
            config=self.config,
            provider=provider,
            store=self.store,
            tools=self.tools(),
            skills=self.skills,
            profile=self.profile,
            curator=self.curator,
            provider_for=self.provider_for,
            approvals=approvals,
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
        model = self.store.get_session(session_id).model or self.model
        quick = self.config.with_overrides(max_retries=0, stream_timeout=SUMMARY_STREAM_TIMEOUT)
        summary = Curator(create_provider(quick, model=model), self.skills).summarize_session(
            history
        )
        if summary:
            self.store.update_session(session_id, summary=summary)
        return summary

    def close(self) -> None:
        store = self._parts.get("store")
        if store is not None:
            store.close()


class _StoreUses:
    """Skill use counts in the runtime's store, which is opened on first need."""

    def __init__(self, runtime: Runtime):
        self._runtime = runtime

    def count_skill_use(self, name: str) -> None:
        self._runtime.store.count_skill_use(name)

    def skill_use_counts(self) -> dict[str, tuple[int, str | None]]:
        return self._runtime.store.skill_use_counts()
