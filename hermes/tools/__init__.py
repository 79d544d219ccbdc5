"""The agent's tools. ``all_tools()`` is the full set; surfaces narrow it down."""

from __future__ import annotations

from hermes.tools.registry import Tool, ToolContext, ToolOutput, ToolRegistry, tool


def all_tools() -> ToolRegistry:
    """Every tool, in the order the model sees them."""
    from hermes.tools import files, memory, profile, shell, skills

    return ToolRegistry(
        [
            shell.run_bash,
            files.read_file,
            files.write_file,
            files.edit_file,
            files.list_dir,
            files.search_files,
            memory.search_memory,
            profile.remember,
            skills.list_skills,
            skills.use_skill,
            skills.create_skill,
        ]
    )


__all__ = ["Tool", "ToolContext", "ToolOutput", "ToolRegistry", "all_tools", "tool"]
