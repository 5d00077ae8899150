"""Tests for analyzer/generator/tools_tagged.py (and the closings of calls.py), derived from
the tagged templates' own renderings of a call: an undeclared parameter and a left-out
closing marker are read and noted."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from rendered_calls import ARGUMENTS, analysed, checked, render_call, template_paths

from analyzer import peg as p
from analyzer.checks.verify import Rendered
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.build import LeadRun, lead_run, spaced
from analyzer.model import Analysis, ToolFormat
from analyzer.peg.state import MatchState


@cache
def rendered(path: Path) -> tuple[Analysis, GeneratedParser, Rendered] | None:
    analysis = analysed(path)
    if analysis.tools.format.mode != ToolFormat.TAG_WITH_TAGGED or analysis.handler != "auto":
        return None
    result = render_call(path, analysis, "two")
    if result is None:
        return None
    return analysis, generate_parser(analysis, result.options, prompt=result.prompt), result


def tagged(path: Path) -> tuple[Analysis, GeneratedParser, Rendered]:
    found = rendered(path)
    if found is None:
        pytest.skip("not a tagged-argument template that renders the call")
    return found


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_an_undeclared_parameter_is_kept_and_noted(path: Path) -> None:
    _, parser, result = tagged(path)
    output = result.output.replace("city", "town")  # both tags where the close echoes it
    if output == result.output or "town" not in output.split("hotels")[-1]:
        pytest.skip("the render does not name the second argument after the first")
    report = checked(parser, output)
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [
        {"query": "hotels", "town": "Paris"}]
    [deviation] = report.deviations
    assert (deviation.kind, deviation.action) == ("unknown_parameter", "accepted")
    assert "`city`" in deviation.expected and "town" in deviation.found


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_left_out_closing_marker_is_read_as_there_and_noted(path: Path) -> None:
    analysis, parser, result = tagged(path)
    tools = analysis.tools
    closers = [m.strip() for m in (tools.function.close, tools.format.per_call_end,
                                   tools.format.section_end) if m.strip()]
    present = [m for m in dict.fromkeys(closers) if m in result.output]
    if not present:
        pytest.skip("the render closes its call with no marker")
    for marker in present:
        at = result.output.rindex(marker)
        report = checked(parser, result.output[:at] + result.output[at + len(marker):])
        assert [json.loads(c.arguments) for c in report.message.tool_calls] == [ARGUMENTS]
        assert [(d.kind, d.expected) for d in report.deviations] == [
            ("missing_close", f"`{marker}`")], marker


def test_a_lead_run_matches_as_its_items_do() -> None:
    # An argument's markup: a literal, a captured name, spaced and fused closings, a commit,
    # whitespace; then a value. The regex stands for the items only where they all match.
    items = p.literal("<key>") + p.arg_name(p.literal("city")) + spaced("</key>") + p.commit()
    markup = items + p.space() + p.literal("<value>") + p.space() + p.until("</value>")
    run = lead_run(markup)
    assert isinstance(run, LeadRun)
    assert run.describe() == markup.describe()
    text = "<key>city </key>\n <value> Paris</value>"
    inputs = [text[:at] + extra + text[at:] for at in range(len(text) + 1)
              for extra in ("", " ", "\n", "x", "<")] + [text[:at] for at in range(len(text))]
    for given in inputs:
        fast, general = MatchState(given, False, traced=False), MatchState(given, False)
        general.fail_pos = fast.fail_pos
        assert (run.match(fast, 0), fast.events, fast.commits) == (
            markup.match(general, 0), general.events, general.commits), given
