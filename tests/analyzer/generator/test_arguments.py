"""JSON arguments are always an object (analyzer/generator/arguments.py): an object written as
a JSON string is decoded, any other value is dropped for `{}`; both reported.

The outputs are the templates' own renderings of a call, its arguments object replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rendered_calls import ARGUMENTS, analysed, checked, render_call, template_paths

from analyzer.generator import ParseReport, generate_parser
from analyzer.model import ToolFormat

JSON_MODES = (ToolFormat.JSON_NATIVE, ToolFormat.TAG_WITH_JSON)


def with_arguments(path: Path, value: str) -> tuple[ParseReport, int]:
    """Parse the template's rendered call with its arguments object replaced by value."""
    analysis = analysed(path)
    if analysis.tools.format.mode not in JSON_MODES or analysis.tools.format.uses_python_dicts:
        pytest.skip("not a template whose calls carry a JSON arguments object")
    result = render_call(path, analysis, "one")
    if result is None:
        pytest.skip("the template does not render the call")
    body = result.output.find("{", result.output.find("search_records"))
    try:
        found, end = json.JSONDecoder().raw_decode(result.output, body)
    except ValueError:
        pytest.skip("the render writes the arguments in another layout")
    if found != ARGUMENTS:
        pytest.skip("the render writes the arguments in another layout")
    output = result.output[:body] + value + result.output[end:]
    parser = generate_parser(analysis, result.options, prompt=result.prompt)
    return checked(parser, output), body


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_an_object_written_as_a_json_string_is_decoded_and_noted(path: Path) -> None:
    report, at = with_arguments(path, json.dumps(json.dumps(ARGUMENTS)))
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [ARGUMENTS]
    assert [(d.kind, d.action, d.offset) for d in report.deviations] == [
        ("arguments_not_object", "accepted", at)]


@pytest.mark.parametrize("value", ['"hotels in Paris"', "[1, 2]", "null"])
@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_value_that_is_no_object_is_dropped_and_quoted(path: Path, value: str) -> None:
    report, at = with_arguments(path, value)
    assert [(c.name, c.arguments) for c in report.message.tool_calls] == [("search_records", "{}")]
    assert [(d.kind, d.action, d.offset) for d in report.deviations] == [
        ("arguments_not_object", "dropped", at)]
    assert report.deviations[0].found.startswith(f"`{value}")
