"""Confine every path a tool touches to HERMES_WORKSPACE.

Paths come from the model, so they are hostile: ``..`` walks, absolute paths,
``~``, NUL bytes and symlinks that point out of the workspace are all refused.
The check runs on the *resolved* path (symlinks followed), so a link inside
the workspace cannot be used to read or write outside it.

HERMES_HOME is fenced off even when the workspace contains it (Hermes run
from ``~`` has ``~/.hermes`` inside its workspace): its ``.env``, secret key,
database, approval rules and grants would let the model read the user's keys
or switch approvals off. Skills stay readable through use_skill.
"""

from __future__ import annotations

import os
from pathlib import Path

from hermes.errors import ToolError


def resolve_in_workspace(
    workspace: Path, path: str, *, home: Path | None, must_exist: bool = False
) -> Path:
    """Return ``path`` resolved inside ``workspace`` and outside ``home``, or raise ToolError.

    Relative paths are taken from the workspace root; absolute paths are
    accepted when they lie inside it. Symlinks are resolved first, including a
    dangling link as the last component, so writing through a link that points
    outside is refused just like reading through it. ``home`` is Hermes' data
    folder (None: nothing to fence off).
    """
    root = Path(os.path.realpath(workspace))
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path is empty: give a path relative to the workspace, e.g. 'src/main.py'")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte; give a plain file path")
    if path.startswith("~"):
        raise ToolError(
            f"path {path!r} uses '~', which is not expanded; give a path relative to the "
            f"workspace (HERMES_WORKSPACE={root})"
        )
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    # realpath (non-strict) follows every symlink that exists, including a final
    # dangling one, and normalises the components that do not exist yet.
    resolved = Path(os.path.realpath(candidate))
    if not is_inside(root, resolved):
        raise ToolError(
            f"path {path!r} is outside the workspace (HERMES_WORKSPACE={root}); "
            "only files inside it can be used"
        )
    fence = fenced_home(root, home)
    if fence is not None and is_inside(fence, resolved):
        raise ToolError(
            f"path {path!r} is in Hermes' own data folder (HERMES_HOME={fence}), which the "
            "file tools never read or change (its settings, keys, database and approvals); "
            "skills are read with use_skill"
        )
    if must_exist and not resolved.exists():
        raise ToolError(
            f"{path!r} does not exist in the workspace; use list_dir to see what is there"
        )
    return resolved


def fenced_home(root: Path, home: Path | None) -> Path | None:
    """The resolved data folder the file tools must keep out of, or None.

    None when there is no home or the workspace lies inside it (a server's
    ``$HERMES_HOME/workspace``): then the rest of the home is outside the
    workspace anyway, and the workspace itself is the model's.
    """
    if home is None:
        return None
    fence = Path(os.path.realpath(home))
    if root != fence and is_inside(fence, root):
        return None
    return fence


def is_inside(root: Path, path: Path) -> bool:
    """True when ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or root in path.parents


def relative_name(workspace: Path, path: Path) -> str:
    """How a resolved path is shown to the model: relative to the workspace."""
    root = Path(os.path.realpath(workspace))
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    return rel.as_posix() if rel.parts else "."
