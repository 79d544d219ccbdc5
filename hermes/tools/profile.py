"""remember: curated profile memory (memory/USER.md and memory/MEMORY.md).

Like the skill tools it writes only under HERMES_HOME, so it is ``kind="read"``
and stays available on the web surface.
"""

from __future__ import annotations

from typing import Literal

from hermes.errors import HermesError, ToolError
from hermes.tools.registry import ToolContext, tool


@tool
def remember(
    ctx: ToolContext,
    action: Literal["add", "replace", "remove"],
    target: Literal["user", "memory"],
    text: str,
    old: str | None = None,
) -> str:
    """Keep a durable note in profile memory, shown to you at the start of every future session.

    Use target "user" for who the user is and what they prefer, "memory" for your own notes
    (facts about this environment, lessons learned). Keep entries short. Changes show up in
    the next session, not this one.

    Args:
        action: "add" a new entry, "replace" the entry containing `old` with `text`, or "remove" the entry containing `old` (for remove, `text` may repeat `old`).
        target: "user" (USER.md) or "memory" (MEMORY.md).
        text: The entry to add, or the replacement text.
        old: A unique part of the existing entry to replace or remove.
    """
    if ctx.profile is None:
        raise ToolError("Profile memory is not available in this session.")
    try:
        if action == "add":
            return ctx.profile.add(target, text)
        if action == "replace":
            if not old:
                raise ToolError("replace needs `old`: a unique part of the entry to replace.")
            return ctx.profile.replace(target, old, text)
        return ctx.profile.remove(target, old or text)
    except HermesError as exc:
        if isinstance(exc, ToolError):
            raise
        raise ToolError(exc.message) from None
