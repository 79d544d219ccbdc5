"""Tool schemas come from signatures and docstrings; validation guards the model's arguments."""

from __future__ import annotations

from typing import Literal

import pytest

from hermes.errors import ToolError
from hermes.tools.files import edit_file, list_dir, read_file, write_file
from hermes.tools.registry import ToolContext, ToolRegistry, spec_from_function, tool
from hermes.tools.search import search_files
from hermes.tools.shell import run_bash


def sample(
    ctx: ToolContext,
    name: str,
    count: int = 3,
    ratio: float | None = None,
    mode: Literal["fast", "slow"] = "fast",
    tags: list[str] | None = None,
    loud: bool = False,
) -> str:
    """Do a sample thing.

    Second paragraph of the description.

    Args:
        name: Who to greet.
        count: How many times,
            continued on a second line.
        ratio (float): A ratio.
        mode: Speed.
        tags: Labels.
        loud: Shout.

    Returns:
        Text.
    """
    return name


def test_schema_from_signature_and_docstring():
    spec = spec_from_function(sample)
    assert spec.name == "sample"
    assert spec.description == "Do a sample thing.\n\nSecond paragraph of the description."
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Who to greet."},
            "count": {
                "type": "integer",
                "description": "How many times, continued on a second line.",
                "default": 3,
            },
            "ratio": {"type": "number", "description": "A ratio."},
            "mode": {
                "type": "string",
                "enum": ["fast", "slow"],
                "description": "Speed.",
                "default": "fast",
            },
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."},
            "loud": {"type": "boolean", "description": "Shout.", "default": False},
        },
        "required": ["name"],
    }


def test_unsupported_parameter_types_fail_at_definition():
    def bad(ctx: ToolContext, when: object) -> str:
        """Bad."""
        return ""

    with pytest.raises(TypeError, match="unsupported tool parameter type"):
        tool(bad)


@pytest.fixture
def sample_tool():
    return tool(sample)


def test_validate_accepts_good_arguments(sample_tool):
    arguments = {"name": "Ada", "count": 2, "ratio": 1, "mode": "slow", "tags": ["a"], "loud": True}
    assert sample_tool.validate(arguments) == arguments


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "missing required argument 'name'"),
        ({"name": "x", "colour": "red"}, "unknown argument(s) colour; sample takes name, count"),
        ({"name": 5}, "argument 'name' must be of type string, got int"),
        ({"name": "x", "count": True}, "argument 'count' must be of type integer, got bool"),
        ({"name": "x", "count": 2.5}, "argument 'count' must be of type integer, got float"),
        ({"name": "x", "count": "many"}, "argument 'count' must be of type integer, got str"),
        ({"name": "x", "mode": "medium"}, "argument 'mode' must be one of ['fast', 'slow']"),
        ({"name": "x", "tags": ["a", 1]}, "argument 'tags[1]' must be of type string, got int"),
        ({"name": "x", "loud": "yes"}, "argument 'loud' must be of type boolean, got str"),
    ],
)
def test_validate_names_the_problem(sample_tool, arguments, message):
    with pytest.raises(ToolError) as raised:
        sample_tool.validate(arguments)
    assert message in raised.value.message


def test_validate_forgives_quoted_and_float_integers(sample_tool):
    assert sample_tool.validate({"name": "x", "count": "12"})["count"] == 12
    assert sample_tool.validate({"name": "x", "count": " -4 "})["count"] == -4
    assert sample_tool.validate({"name": "x", "count": 7.0})["count"] == 7


def test_null_for_an_optional_argument_means_not_given(sample_tool):
    # OpenAI strict-mode schemas and many local models send null for "not given".
    assert sample_tool.validate({"name": "x", "ratio": None}) == {"name": "x"}


@pytest.mark.parametrize("value", ["--5", "²"])
def test_odd_digit_strings_are_a_tool_error(sample_tool, value):
    with pytest.raises(ToolError):
        sample_tool.validate({"name": "x", "count": value})


def test_arguments_that_are_not_an_object_are_a_tool_error(sample_tool):
    with pytest.raises(ToolError):
        sample_tool.validate(None)


WORKSPACE_TOOLS = [run_bash, read_file, write_file, edit_file, list_dir, search_files]


def test_workspace_tools_have_the_spec_names_and_kinds():
    assert [(t.name, t.kind) for t in WORKSPACE_TOOLS] == [
        ("run_bash", "shell"),
        ("read_file", "read"),
        ("write_file", "write"),
        ("edit_file", "write"),
        ("list_dir", "read"),
        ("search_files", "read"),
    ]
    registry = ToolRegistry(WORKSPACE_TOOLS)
    assert registry.without("shell", "write").names() == ["read_file", "list_dir", "search_files"]


@pytest.mark.parametrize("t", WORKSPACE_TOOLS, ids=lambda t: t.name)
def test_workspace_tools_describe_every_parameter(t):
    assert t.spec.description
    for name, schema in t.spec.parameters["properties"].items():
        assert schema.get("description"), f"{t.name}.{name} has no description"
