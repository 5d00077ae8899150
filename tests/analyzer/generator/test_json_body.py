"""Tests for analyzer/generator/json_body.py, derived from the renders of templates that write
tagged calls or Python-style call lists: JSON call objects written in the template's call
wrapper instead are read and noted; one naming an undeclared function stays text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rendered_calls import ARGUMENTS, analysed, checked, render_call, template_paths

from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.calls import marker_like
from analyzer.generator.python_calls import is_python_call_list
from analyzer.model import ToolFormat


def wrapped(path: Path) -> tuple[GeneratedParser, str, str, str]:
    """The parser, the render's text before the calls, and the call wrapper's opening and
    closing (the section's, else the per-call one's; a Python list's brackets left in)."""
    analysis = analysed(path)
    fmt = analysis.tools.format
    if fmt.mode != ToolFormat.TAG_WITH_TAGGED or analysis.handler != "auto":
        pytest.skip("not a template that renders tagged calls")
    opening, closing = fmt.section_start.strip(), fmt.section_end.strip()
    if not opening:
        opening, closing = fmt.per_call_start.strip(), fmt.per_call_end.strip()
    result = render_call(path, analysis, "json-body")
    if result is None or not marker_like(opening) or opening not in result.output:
        pytest.skip("the template renders no call wrapper")
    parser = generate_parser(analysis, result.options, prompt=result.prompt)
    before = result.output[:result.output.find(opening)]
    if is_python_call_list(analysis):  # the list's brackets are the template's own
        assert opening.endswith("[") and closing.startswith("]")
    return parser, before, opening, closing


def body(name: str, arguments: dict[str, object]) -> str:
    return json.dumps({"name": name, "arguments": arguments})


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_json_body_in_the_call_wrapper_is_read_and_noted(path: Path) -> None:
    parser, before, opening, closing = wrapped(path)
    output = f"{before}{opening}{body('search_records', ARGUMENTS)}{closing}"
    report = checked(parser, output)
    assert [(c.name, json.loads(c.arguments)) for c in report.message.tool_calls] == [
        ("search_records", ARGUMENTS)]
    assert report.message.content.strip() == parser.parse(before).content.strip()
    (deviation,) = report.deviations
    assert (deviation.kind, deviation.action) == ("json_body", "accepted")
    assert deviation.offset == len(before) + len(opening)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_several_json_bodies_in_one_wrapper_are_each_a_call(path: Path) -> None:
    parser, before, opening, closing = wrapped(path)
    second = {"query": "museums", "city": "Rome"}
    calls = f"{body('search_records', ARGUMENTS)},\n{body('search_records', second)}"
    report = checked(parser, f"{before}{opening}{calls}{closing}")
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [ARGUMENTS, second]
    assert [d.kind for d in report.deviations] == ["json_body"]


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_json_body_calling_an_undeclared_function_stays_text(path: Path) -> None:
    parser, before, opening, closing = wrapped(path)
    undeclared = body("drop_all_tables", ARGUMENTS)
    report = checked(parser, f"{before}{opening}{undeclared}{closing}")
    assert report.message.tool_calls == ()
    assert undeclared in report.message.content
    assert "json_body" not in [d.kind for d in report.deviations]


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_json_body_between_a_python_lists_tokens_needs_no_brackets(path: Path) -> None:
    parser, before, opening, closing = wrapped(path)
    if not is_python_call_list(analysed(path)):
        pytest.skip("not a Python-style call list")
    inner = body("search_records", ARGUMENTS)
    report = checked(parser, f"{before}{opening[:-1]}{inner}{closing[1:]}")
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [ARGUMENTS]
    assert [d.kind for d in report.deviations] == ["json_body"]
