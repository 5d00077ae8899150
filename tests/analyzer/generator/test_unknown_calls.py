"""Calls of undeclared functions (analyzer/generator/unknown_calls.py): kept as content whole,
reported once, also when the request declares no function at all.

Every output is a template's own rendering of a call (verify's machinery), its function name
swapped for one the request does not declare, or parsed for a request that declares none.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from rendered_calls import analysed, checked, render_call, template_paths

from analyzer.checks.verify import Rendered
from analyzer.generator import generate_parser
from analyzer.model import Analysis, ToolFormat
from analyzer.parsing.deviations import NO_FUNCTIONS

UNDECLARED = "drop_all_tables"


def rendered(path: Path) -> tuple[Analysis, Rendered]:
    analysis = analysed(path)
    if analysis.tools.format.mode == ToolFormat.NONE or analysis.handler != "auto":
        pytest.skip("not a template whose generated parser reads calls")
    result = render_call(path, analysis, "one")
    if result is None or result.output.count("search_records") != 1:
        pytest.skip("the template does not render the call with its name once")
    return analysis, result


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_an_undeclared_function_call_stays_content_verbatim_with_one_deviation(
        path: Path) -> None:
    analysis, result = rendered(path)
    output = result.output.replace("search_records", UNDECLARED)
    report = checked(generate_parser(analysis, result.options, prompt=result.prompt), output)
    assert report.message.tool_calls == ()
    assert UNDECLARED in report.message.content
    assert [(d.kind, d.action) for d in report.deviations] == [
        ("unknown_function", "kept_as_content")]
    assert report.deviations[0].offset == output.index(UNDECLARED)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_call_in_a_request_that_declares_no_function_is_reported(path: Path) -> None:
    analysis, result = rendered(path)
    options = replace(result.options, tools_json="[]")
    report = checked(generate_parser(analysis, options, prompt=result.prompt), result.output)
    assert report.message.tool_calls == ()
    assert "search_records" in report.message.content
    assert [(d.kind, d.expected) for d in report.deviations] == [
        ("unknown_function", NO_FUNCTIONS)]
    assert report.deviations[0].offset == result.output.index("search_records")


def test_a_call_marker_in_text_of_a_request_without_functions_is_plain_text() -> None:
    path = next(p for p in template_paths() if p.stem == "tools_json_native")
    analysis, result = rendered(path)
    parser = generate_parser(analysis, replace(result.options, tools_json="[]"),
                             prompt=result.prompt)
    report = checked(parser, "Wrap calls in <tool_call> tags.")
    assert (report.message.content, report.deviations) == ("Wrap calls in <tool_call> tags.", ())
