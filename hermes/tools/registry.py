"""Tools are plain typed functions; their JSON schema comes from the signature.

    @tool
    def read_file(ctx: ToolContext, path: str, start_line: int = 1) -> str:
        '''Read a text file from the workspace.

        Args:
            path: File path, relative to the workspace.
            start_line: First line to return (1-based).
        '''

The first parameter is always the :class:`ToolContext`. A tool returns text
(or a :class:`ToolOutput` when it has events to report) and raises
:class:`~hermes.errors.ToolError` when it cannot do its job; the loop turns
that, and any other failure, into an error result for the model.
"""

from __future__ import annotations

import inspect
import re
import threading
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes.errors import ToolError
from hermes.events import Event
from hermes.messages import ToolSpec

if TYPE_CHECKING:
    from hermes.config import Config


@dataclass
class ToolContext:
    """What a tool may touch. Services the current surface lacks are None."""

    config: Config
    session_id: int | None = None
    store: Any = None  # hermes.store.Store
    skills: Any = None  # hermes.skills.SkillManager
    profile: Any = None  # hermes.profile.ProfileMemory
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def workspace(self) -> Path:
        return self.config.workspace


@dataclass(frozen=True)
class ToolOutput:
    """A tool's result text plus events to report after it (e.g. a skill was used)."""

    text: str
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class Tool:
    name: str
    function: Callable[..., str | ToolOutput]
    spec: ToolSpec
    # Offered on the web only when HERMES_WEB_ENABLE_SHELL / _WRITE allow it.
    kind: Literal["read", "write", "shell"] = "read"

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check the model's arguments against the schema; raise ToolError naming the problem."""
        if not isinstance(arguments, dict):
            raise ToolError(f"arguments must be a JSON object, not {type(arguments).__name__}")
        schema = self.spec.parameters
        properties = schema.get("properties", {})
        unknown = sorted(set(arguments) - set(properties))
        if unknown:
            raise ToolError(
                f"unknown argument(s) {', '.join(unknown)}; {self.name} takes {', '.join(properties) or 'none'}"
            )
        for required in schema.get("required", []):
            if required not in arguments:
                raise ToolError(f"missing required argument {required!r}")
        checked = {}
        for key, value in arguments.items():
            if value is None and key not in schema.get("required", []):
                continue  # models send null for "not given": the default applies
            checked[key] = _check_value(key, value, properties[key])
        return checked


class ToolRegistry:
    """The tools a turn offers the model, by name."""

    def __init__(self, tools: Iterable[Tool] = ()):
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def without(self, *kinds: str) -> ToolRegistry:
        return ToolRegistry(t for t in self._tools.values() if t.kind not in kinds)

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)


def tool(function: Callable | None = None, *, kind: Literal["read", "write", "shell"] = "read"):
    """Decorator: turn a typed function into a :class:`Tool`."""

    def wrap(fn: Callable) -> Tool:
        return Tool(name=fn.__name__, function=fn, spec=spec_from_function(fn), kind=kind)

    return wrap(function) if function is not None else wrap


def spec_from_function(fn: Callable) -> ToolSpec:
    """Build a tool's JSON schema from its signature and Google-style docstring."""
    description, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    params = list(inspect.signature(fn).parameters.values())[1:]  # skip ctx
    for param in params:
        schema = _schema_for(hints[param.name])
        if param.name in arg_docs:
            schema["description"] = arg_docs[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif param.default is not None:
            schema["default"] = param.default
        properties[param.name] = schema
    parameters = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(name=fn.__name__, description=description, parameters=parameters)


def _schema_for(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _schema_for(inner[0])
    if origin is Literal:
        return {"type": _JSON_TYPES[type(args[0])], "enum": list(args)}
    if origin is list:
        return {"type": "array", "items": _schema_for(args[0]) if args else {}}
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    raise TypeError(f"unsupported tool parameter type: {hint!r}")


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object"}


def _check_value(key: str, value: Any, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    ok = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }.get(kind, True)
    if (
        not ok
        and kind == "integer"
        and isinstance(value, str)
        and re.fullmatch(r"\s*[+-]?[0-9]+\s*", value)
    ):
        # Small local models often quote numbers; accept "12" for 12.
        return int(value)
    if not ok and kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if not ok:
        raise ToolError(f"argument {key!r} must be of type {kind}, got {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"argument {key!r} must be one of {schema['enum']}")
    if kind == "array" and "items" in schema:
        return [_check_value(f"{key}[{i}]", item, schema["items"]) for i, item in enumerate(value)]
    return value


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description and its ``Args:`` entries."""
    description_lines: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:"):
            in_args = True
            continue
        if in_args:
            match = re.match(r"^(\w+)(?:\s*\(.*?\))?:\s*(.*)$", stripped)
            if match and line.startswith("    ") and not line.startswith("        "):
                current = match.group(1)
                args[current] = match.group(2)
            elif stripped and current:
                args[current] += " " + stripped
            elif not stripped:
                current = None
            continue
        description_lines.append(line)
    return "\n".join(description_lines).strip(), args
