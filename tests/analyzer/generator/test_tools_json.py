"""Tests for analyzer/generator/tools_json.py, derived from the JSON templates' renderings:
the arguments under the other usual key are read (noted), under an unknown key they are
noted as dropped, never lost in silence; a member the template does not write is noted as
dropped (`unknown_member`) and changes no call."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from rendered_calls import ARGUMENTS, analysed, checked, render_call, template_paths, whole_outcome

from analyzer.checks.verify import Rendered
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.tools_json import SWAPPED_KEYS
from analyzer.model import ToolFormat
from analyzer.parsing.stream import accumulate


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


# Members a model may write that the template does not (OpenAI's `"type": "function"`, an
# id where the template writes none, any scalar or array): key and value, as JSON writes them.
EXTRA_MEMBERS = ('"type": "function"', '"call_ref": "call_1"', '"score": 0.5',
                 '"tags": ["a", {"b": [1, 2]}]', '"done": true', '"note": null')


def every_split_agrees(parser: GeneratedParser, output: str) -> None:
    """A stream fed the output in two pieces, cut anywhere, gives the one-shot parse."""
    report = parser.parse_report(output)
    for split in range(len(output) + 1):
        stream = parser.stream()
        deltas = stream.feed(output[:split]) + stream.feed(output[split:]) + stream.finish()
        assert accumulate(deltas) == report.message, split
        assert stream.deviations == report.deviations, split


@cache
def json_call(path: Path) -> tuple[GeneratedParser, str, str] | None:
    """The parser, one call's rendering and the name's key, for a JSON template whose call
    object writes the name under a key."""
    analysis = analysed(path)
    fmt = analysis.tools.format
    if fmt.mode != ToolFormat.JSON_NATIVE or analysis.handler != "auto" or fmt.fun_name_is_key:
        return None
    result = render_call(path, analysis, "one")
    name_key = json.dumps(fmt.name_field.split(".")[-1])
    if result is None or name_key not in result.output:
        return None
    parser = generate_parser(analysis, result.options, prompt=result.prompt)
    return parser, result.output, name_key


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_member_the_template_does_not_write_is_noted_as_dropped(path: Path) -> None:
    found = json_call(path)
    if found is None:
        pytest.skip("not a JSON-call template with a name member")
    parser, output, name_key = found
    clean = checked(parser, output)
    assert clean.deviations == ()
    opener = output.rfind("{", 0, output.index(name_key)) + 1  # the object holding the name
    for member in EXTRA_MEMBERS:
        for text in (output[:opener] + member + ", " + output[opener:],  # first
                     output[:opener] + " " + member + " ,\n" + output[opener:]):  # spaced
            report = checked(parser, text)
            assert report.message == clean.message, text  # the calls read are unchanged
            offset = text.index(member)
            assert [(d.kind, d.action, d.offset) for d in report.deviations] == [
                ("unknown_member", "dropped", offset)], text
            assert report.deviations[0].found.startswith("`" + member[:20]), text
            # The whole parse's shortcuts (MemberLoop) and the traced general path agree.
            start, whole = parser.parser.start, parser.prompt.tail + text
            assert whole_outcome(start, whole, False) == whole_outcome(start, whole, True)
    # Two of them, one after the name: each noted where it starts.
    after = output.index(name_key) + len(name_key)
    after = output.index(",", after) if "," in output[after:] else -1
    if after >= 0:
        text = (output[:opener] + '"type": "function", ' + output[opener:after + 1]
                + ' "score": 0.5,' + output[after + 1:])
        report = checked(parser, text)
        assert report.message == clean.message, text
        assert [(d.kind, d.offset) for d in report.deviations] == [
            ("unknown_member", text.index('"type"')), ("unknown_member", text.index('"score"'))]
        every_split_agrees(parser, text)


def test_json_templates_with_a_name_member_are_present() -> None:
    assert sum(json_call(path) is not None for path in template_paths()) >= 10
