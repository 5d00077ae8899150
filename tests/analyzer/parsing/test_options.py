"""Request options: built from plain values, checked, hashable, with template variables."""

from __future__ import annotations

import pytest

from analyzer.errors import InvalidInputError
from analyzer.parsing.options import ParseOptions

TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def test_equal_requests_make_equal_hashable_options() -> None:
    first = ParseOptions.make(tools=[TOOL], enable_thinking=True, json_schema={"type": "object"})
    second = ParseOptions.make(tools=[dict(TOOL)], enable_thinking=True,
                               json_schema={"type": "object"})
    assert first == second and hash(first) == hash(second)
    assert first.tools == [TOOL] and first.json_schema == {"type": "object"}


def test_reasoning_none_is_not_extracted_and_tool_choice_none_wants_no_tools() -> None:
    options = ParseOptions.make(tools=[TOOL], reasoning_format="none", tool_choice="none")
    assert (options.extract_reasoning, options.wants_tools) == (False, False)
    assert ParseOptions.make(tools=[TOOL]).wants_tools


def test_enable_thinking_is_a_template_variable_only_when_given() -> None:
    assert ParseOptions.make().render_kwargs() == {}
    options = ParseOptions.make(enable_thinking=False, chat_template_kwargs={"x": 1})
    assert options.render_kwargs() == {"x": 1, "enable_thinking": False}


def test_an_unknown_reasoning_format_names_the_choices() -> None:
    with pytest.raises(InvalidInputError,
                       match="reasoning_format: expected one of auto, none, deepseek; found 'r1'"):
        ParseOptions.make(reasoning_format="r1")


def test_a_tool_without_a_name_is_refused() -> None:
    with pytest.raises(InvalidInputError,
                       match=r"tools\[0\]: expected a function tool with a name"):
        ParseOptions.make(tools=[{"type": "function", "function": {}}])
