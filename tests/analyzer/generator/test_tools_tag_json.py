"""Tests for analyzer/generator/tools_tag_json.py, derived from the TAG_WITH_JSON templates'
own renderings of a call: the marker before the JSON arguments left out is read as there
and noted."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from rendered_calls import ARGUMENTS, analysed, checked, render_call, template_paths

from analyzer.checks.verify import Rendered
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.model import Analysis, ToolFormat


@cache
def rendered(path: Path) -> tuple[Analysis, GeneratedParser, Rendered] | None:
    analysis = analysed(path)
    if analysis.tools.format.mode != ToolFormat.TAG_WITH_JSON or analysis.handler != "auto":
        return None
    result = render_call(path, analysis, "tag-json")
    if result is None:
        return None
    return analysis, generate_parser(analysis, result.options, prompt=result.prompt), result


def without_marker(path: Path, which: str) -> tuple[GeneratedParser, Rendered, str, int, str]:
    """The render with one marker between the name and the arguments cut out (which: the
    name's suffix or the arguments' start), where it was, and the marker."""
    found = rendered(path)
    if found is None:
        pytest.skip("not a TAG_WITH_JSON template that renders the call")
    analysis, parser, result = found
    tools = analysis.tools
    marker = (tools.function.name_suffix if which == "name-suffix"
              else tools.arguments.start).strip()
    at = result.output.find(marker, result.output.find("search_records"))
    if not marker or at < 0:
        pytest.skip(f"the render has no {which} marker between the name and the arguments")
    return parser, result, result.output[:at] + result.output[at + len(marker):], at, marker


@pytest.mark.parametrize("which", ["name-suffix", "arguments-start"])
@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_left_out_marker_before_the_arguments_is_read_as_there_and_noted(
        path: Path, which: str) -> None:
    parser, result, output, at, marker = without_marker(path, which)
    report = checked(parser, output)
    exact = parser.parse(result.output)
    assert [(c.name, json.loads(c.arguments), c.id) for c in report.message.tool_calls] == [
        ("search_records", ARGUMENTS, exact.tool_calls[0].id)]
    (deviation,) = report.deviations
    assert (deviation.kind, deviation.action) == ("missing_control_token", "accepted")
    assert len(output[:at].rstrip()) <= deviation.offset <= at
    assert marker in deviation.expected


@pytest.mark.parametrize("which", ["name-suffix", "arguments-start"])
@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_without_its_marker_text_that_is_no_json_object_is_no_call(path: Path,
                                                                   which: str) -> None:
    parser, _, output, at, _ = without_marker(path, which)
    report = parser.parse_report(output[:at] + "query: hotels, city: Paris")
    assert "missing_control_token" not in [d.kind for d in report.deviations]
    assert all(json.loads(c.arguments) != ARGUMENTS for c in report.message.tool_calls)
