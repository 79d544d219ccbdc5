"""The search_memory tool the model calls, over a real store."""

from __future__ import annotations

import pytest

from hermes.errors import ToolError
from hermes.messages import Message
from hermes.tools.memory import search_memory
from hermes.tools.registry import ToolContext


def test_search_memory_returns_compact_hits(store, config):
    session = store.create_session(title="Homelab")
    stored = store.add_message(
        session.id, Message("user", "I moved the homelab DNS to Pi-hole on 10.0.0.53")
    )
    store.update_session(session.id, summary="I helped move the homelab DNS.")
    ctx = ToolContext(config=config, store=store, session_id=999)
    text = search_memory.function(ctx, "where is my homelab DNS?")
    # The message, and the session whose summary matched.
    assert text.splitlines()[0].startswith("2 results")
    assert "session summary" in text
    assert f"session {session.id} 'Homelab'" in text
    assert f"message {stored.id}" in text and "«homelab»" in text.lower()


def test_search_memory_marks_the_current_session_and_handles_no_hits(store, config):
    session = store.create_session(title="Now")
    store.add_message(session.id, Message("user", "quokka facts"))
    ctx = ToolContext(config=config, store=store, session_id=session.id)
    assert "(this session)" in search_memory.function(ctx, "quokka")
    assert search_memory.function(ctx, "NEAR( zzzunknownzzz *").startswith("No past messages")


def test_search_memory_schema_and_errors(config):
    spec = search_memory.spec
    assert spec.name == "search_memory"
    assert spec.parameters["required"] == ["query"]
    assert spec.parameters["properties"]["limit"]["default"] == 8
    with pytest.raises(ToolError, match="not available"):
        search_memory.function(ToolContext(config=config), "x")
    with pytest.raises(ToolError, match="empty"):
        search_memory.function(ToolContext(config=config, store=object()), "  ")
