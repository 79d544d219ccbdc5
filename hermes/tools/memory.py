"""``search_memory``: the agent looks through every past conversation."""

from __future__ import annotations

from hermes.errors import ToolError
from hermes.tools.registry import ToolContext, tool

MAX_RESULTS = 20


@tool
def search_memory(ctx: ToolContext, query: str, limit: int = 8) -> str:
    """Search all past conversations and session summaries with the user.

    Use it when the user refers to something from before ("the script we wrote
    last week", "what did I decide about X"). Plain words or a question work;
    "quoted phrases" stay together. Matched words are marked «like this».

    Args:
        query: What to look for, in plain words.
        limit: How many results to return (1-20).
    """
    if ctx.store is None:
        raise ToolError("memory search is not available here (no database is open)")
    if not query.strip():
        raise ToolError("query is empty; say what to look for")
    hits = ctx.store.search(query, limit=max(1, min(limit, MAX_RESULTS)))
    if not hits:
        return f"No past messages match {query!r}."
    noun = "result" if len(hits) == 1 else "results"
    lines = [f"{len(hits)} {noun} for {query!r} (best first):"]
    for n, hit in enumerate(hits, 1):
        title = hit.session_title or "untitled"
        here = " (this session)" if hit.session_id == ctx.session_id else ""
        where = f"message {hit.message_id}" if hit.message_id is not None else "session summary"
        lines.append(
            f"[{n}] session {hit.session_id} {title!r}{here} · {hit.created_at:%Y-%m-%d} · "
            f"{hit.role} · {where}"
        )
        lines.append("    " + " ".join(hit.snippet.split()))
    return "\n".join(lines)
