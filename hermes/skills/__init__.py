"""Skills: Agent Skills (agentskills.io) folders the agent writes, refines and reuses."""

from __future__ import annotations

from hermes.skills.history import SkillVersion
from hermes.skills.index import render_index
from hermes.skills.manager import SkillManager
from hermes.skills.schema import Skill, parse_skill_md, render_skill_md, validate_skill

__all__ = [
    "Skill",
    "SkillManager",
    "SkillVersion",
    "parse_skill_md",
    "render_index",
    "render_skill_md",
    "validate_skill",
]
