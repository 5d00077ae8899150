"""Tests for analyzer/generator/tools_json.py, derived from the JSON templates' renderings:
the arguments under the other usual key are read (noted), under an unknown key they are
noted as dropped, never lost in silence."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from rendered_calls import ARGUMENTS, analysed, checked, render_call, template_paths

from analyzer.checks.verify import Rendered
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.tools_json import SWAPPED_KEYS
from analyzer.model import ToolFormat


@cache
def rendered(path: Path) -> tuple[GeneratedParser, Rendered, str] | None:
    analysis = analysed(path)
    fmt = analysis.tools.format
    key = fmt.args_field.split(".")[-1]
    if fmt.mode != ToolFormat.JSON_NATIVE or analysis.handler != "auto" or key not in SWAPPED_KEYS:
        return None
    result = render_call(path, analysis, "one")
    if result is None or f'"{key}"' not in result.output:
        return None
    return generate_parser(analysis, result.options, prompt=result.prompt), result, key


def json_template(path: Path) -> tuple[GeneratedParser, Rendered, str]:
    found = rendered(path)
    if found is None:
        pytest.skip("not a JSON-call template with an arguments (or parameters) member")
    return found


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_arguments_under_the_other_usual_key_are_read_and_noted(path: Path) -> None:
    parser, result, key = json_template(path)
    assert checked(parser, result.output).deviations == ()
    report = checked(parser, result.output.replace(f'"{key}"', f'"{SWAPPED_KEYS[key]}"', 1))
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [ARGUMENTS]
    assert [(d.kind, d.action) for d in report.deviations] == [("arguments_key", "accepted")]


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_arguments_under_an_unknown_key_are_noted_as_dropped(path: Path) -> None:
    parser, result, key = json_template(path)
    report = checked(parser, result.output.replace(f'"{key}"', '"args"', 1))
    assert [(d.kind, d.action) for d in report.deviations] == [("arguments_key", "dropped")]
    assert report.deviations[0].found.startswith('`"args": {')


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_arguments_written_as_a_json_string_are_read_and_noted(path: Path) -> None:
    parser, result, key = json_template(path)
    text = json.dumps(ARGUMENTS, ensure_ascii=False)
    start = result.output.find(f'"{key}"')
    body = result.output.find("{", start)
    end = result.output.find("}", body) + 1
    if json.loads(result.output[body:end]) != ARGUMENTS:
        pytest.skip("the render writes the arguments in another layout")
    output = result.output[:body] + json.dumps(text) + result.output[end:]
    report = checked(parser, output)
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [ARGUMENTS]
    assert [d.kind for d in report.deviations] == ["arguments_not_object"]


def test_json_templates_are_present() -> None:
    assert sum(rendered(path) is not None for path in template_paths()) >= 2
