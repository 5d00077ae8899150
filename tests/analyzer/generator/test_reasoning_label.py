"""Tests for the reasoning opener of analyzer/generator/reasoning.py: where the template
renders a special token and a fixed label (a channel name), the token alone is read as the
opener and noted; the label is stripped only when it is the template's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import analysed, checked, template_paths

from analyzer import load_template_file
from analyzer.analysis.pipeline import compiled
from analyzer.checks.verify import (
    Case,
    Rendered,
    Subject,
    call,
    render_case,
    required_kwargs,
)
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.reasoning import labelled_token
from analyzer.parsing.message import Message

REASONING = "Paris is close; the weather is mild."
MESSAGES = (Message(content="Go to Paris.", reasoning_content=REASONING),
            Message(reasoning_content=REASONING,
                    tool_calls=(call("get_weather", {"location": "Paris"}),)))


def test_a_labelled_token_is_one_token_then_a_word() -> None:
    assert labelled_token("<|channel>thought") == "<|channel>"
    assert labelled_token("[THINK]analysis") == "[THINK]"
    assert labelled_token("<think>") == ""
    assert labelled_token("<|open|>think<|sep|>") == ""
    assert labelled_token("<|channel>my thoughts") == ""


def rendered(path: Path) -> tuple[GeneratedParser, Rendered, str, str]:
    """The parser, a render with reasoning, the template's opener and its token alone."""
    analysis = analysed(path)
    start = analysis.reasoning.start.strip()
    token = labelled_token(start)
    if not token or analysis.handler != "auto":
        pytest.skip("the reasoning opener is not a token with a fixed label")
    loaded = load_template_file(path)
    chat = compiled(loaded.source, loaded.bos_token, loaded.eos_token, analysis.render_mode)
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    # Some templates show reasoning only before a tool call.
    for message in MESSAGES:
        result = render_case(subject, Case("label", message, thinking=True))
        if not isinstance(result, str) and start in result.output:
            break
    else:
        pytest.skip("the template does not render the reasoning with its opener")
    parser = generate_parser(analysis, result.options, prompt=result.prompt)
    return parser, result, start, token


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_the_token_without_its_label_opens_the_reasoning_and_is_noted(path: Path) -> None:
    parser, result, start, token = rendered(path)
    output = result.output.replace(start, token, 1)
    report = checked(parser, output)
    exact = parser.parse(result.output)
    assert (report.message.reasoning_content.strip(), report.message.content.strip(),
            report.message.tool_calls) == (exact.reasoning_content.strip(),
                                           exact.content.strip(), exact.tool_calls)
    assert REASONING in report.message.reasoning_content
    (deviation,) = report.deviations
    assert (deviation.kind, deviation.action) == ("reasoning_label_missing", "accepted")
    assert deviation.offset == output.find(token)
    assert start in deviation.expected


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_another_label_after_the_token_stays_in_the_reasoning(path: Path) -> None:
    parser, result, start, token = rendered(path)
    report = checked(parser, result.output.replace(start, token + "musings", 1))
    assert report.message.reasoning_content.lstrip().startswith("musings")
    assert [d.kind for d in report.deviations] == ["reasoning_label_missing"]
