"""Tests for analyzer/generator/call_ids.py, derived from the renders of templates whose call
header carries a namespace (`functions.NAME:0`): one left out is read as there, noted where
the name begins, and the call keeps the id the template's header makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rendered_calls import ARGUMENTS, analysed, checked, render_call, template_paths

from analyzer.generator import generate_parser
from analyzer.generator.call_ids import NAMESPACE


def without_namespace(path: Path) -> tuple[str, str, str, int]:
    """The render of a call, the render with the header's namespace cut out, the namespace,
    and where it was."""
    analysis = analysed(path)
    found = NAMESPACE.search(analysis.tools.function.name_prefix.strip())
    if found is None or analysis.handler != "auto":
        pytest.skip("the call header has no namespace")
    result = render_call(path, analysis, "namespace")
    header = found.group() + "search_records"
    if result is None or header not in result.output:
        pytest.skip("the template does not render the call's header")
    at = result.output.find(header)
    return result.output, result.output.replace(header, "search_records", 1), found.group(), at


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_left_out_namespace_is_read_as_there_and_noted(path: Path) -> None:
    exact, output, namespace, at = without_namespace(path)
    analysis = analysed(path)
    result = render_call(path, analysis, "namespace")
    assert result is not None
    parser = generate_parser(analysis, result.options, prompt=result.prompt)
    report = checked(parser, output)
    (call,) = parser.parse(exact).tool_calls
    assert [(c.name, json.loads(c.arguments), c.id) for c in report.message.tool_calls] == [
        ("search_records", ARGUMENTS, call.id)]
    (deviation,) = report.deviations
    assert (deviation.kind, deviation.action, deviation.offset) == (
        "missing_namespace", "accepted", at)
    assert namespace in deviation.expected


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_name_that_only_ends_like_a_declared_one_is_no_call(path: Path) -> None:
    exact, output, namespace, at = without_namespace(path)
    analysis = analysed(path)
    result = render_call(path, analysis, "namespace")
    assert result is not None
    parser = generate_parser(analysis, result.options, prompt=result.prompt)
    report = parser.parse_report(output.replace("search_records", "other.search_records", 1))
    assert report.message.tool_calls == ()
    assert "missing_namespace" not in [d.kind for d in report.deviations]
