"""The provider interface: one class, one ``stream()`` generator.

A provider turns a :class:`~hermes.messages.ModelRequest` into a stream of
``TextDelta``, complete ``ToolCall`` (arguments already assembled and parsed),
``Usage`` and finally one ``StreamEnd``. Failures are raised as
:class:`~hermes.errors.ProviderError` with ``retryable`` set honestly.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from hermes.events import StreamEnd, TextDelta, ToolCall, Usage
from hermes.messages import Message, ModelRequest

Chunk = TextDelta | ToolCall | Usage | StreamEnd


@dataclass(frozen=True)
class ProviderSettings:
    """Connection settings for one provider, taken from :class:`hermes.config.Config`."""

    model: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    connect_timeout: float = 10.0
    # Longest silence allowed between two chunks of a stream before we give up.
    stream_timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0


class Provider(ABC):
    """A model API. Subclasses set ``name``, ``default_model`` (and ``key_variable``) and
    implement ``stream``; a plugin registers one under the ``hermes.providers`` entry points."""

    name: ClassVar[str]
    default_model: ClassVar[str]
    # The environment variable holding the API key; None for one that needs none.
    key_variable: ClassVar[str | None] = None

    def __init__(self, settings: ProviderSettings):
        self.settings = settings

    @property
    def model(self) -> str:
        return self.settings.model

    @abstractmethod
    def stream(self, request: ModelRequest) -> Iterator[Chunk]:
        """Stream one model response."""

    def complete(
        self,
        system: str,
        prompt: str,
        *,
        max_tokens: int = 2048,
        on_usage: Callable[[Usage], None] | None = None,
        cancel: threading.Event | None = None,
        timeout: float | None = None,
    ) -> str:
        """Ask for a plain-text answer with no tools (the curator and summaries use this).

        ``on_usage`` receives the call's token usage, so a turn can count what
        its curator spent. With ``cancel`` or ``timeout`` (seconds) the call
        raises TurnCancelled as soon as the event is set or the time is up.
        """
        request = ModelRequest(
            model=self.model,
            system=system,
            messages=(Message(role="user", content=prompt),),
            max_tokens=max_tokens,
        )
        text = []
        stream = self.stream(request)
        if cancel is not None or timeout is not None:
            from hermes.agent.cancellable import cancellable

            deadline = time.monotonic() + timeout if timeout is not None else None
            stream = cancellable(stream, cancel or threading.Event(), deadline=deadline)
        for chunk in stream:
            if isinstance(chunk, TextDelta):
                text.append(chunk.delta)
            elif isinstance(chunk, Usage) and on_usage is not None:
                on_usage(chunk)
        return "".join(text)
