"""A stream and a one-shot parse of the same broken output agree, and lose no text.

The fuzz (bench/agreement_fuzz.py, seeded): every template's rendering of a call with 1-3
random edits, parsed one-shot and streamed in random chunkings: the same message, the same
deviations (kind, action, offset), and every word of the output that is not the template's
markup in the message (`lost_words`). Then the cases it found, one by one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer import analyze, load_template_file
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import accumulate
from bench.agreement_fuzz import CORPUS, FORMATS, fuzz, rendered_call, template_paths

# Small enough for the suite (all templates in a few seconds); bench/agreement_fuzz.py runs
# 40 outputs x 3 chunkings per template.
OUTPUTS, CHUNKINGS = 12, 2


@pytest.mark.parametrize("path", template_paths(), ids=lambda path: path.stem)
def test_edited_renderings_parse_alike_in_any_chunking_and_lose_no_text(path: Path) -> None:
    if rendered_call(path) is None:
        pytest.skip("no generated parser, or the template cannot render the call")
    _, failures = fuzz([path], OUTPUTS, CHUNKINGS, seed=0)
    found = [f"{f.cause}: {f.output!r}\n  {f.detail}" for f in failures]
    assert not found, "\n".join(found)


def format_parser(name: str) -> tuple[GeneratedParser, str]:
    found = rendered_call(FORMATS / f"{name}.jinja")
    assert found is not None
    return found


def every_split_agrees(parser: GeneratedParser, output: str) -> None:
    report = parser.parse_report(output)
    for split in range(len(output) + 1):
        stream = parser.stream()
        deltas = stream.feed(output[:split]) + stream.feed(output[split:]) + stream.finish()
        assert accumulate(deltas) == report.message, split
        assert stream.deviations == report.deviations, split


def test_text_read_before_a_break_that_nothing_made_final_is_content() -> None:
    # `, "aguments": {...` is read as a member the call would skip, until `ty"` breaks it.
    parser, _ = format_parser("content_wrapped")
    output = '<call>{"name": "search_records", "aguments": {"query": "hotels", "city"ty": 1}}'
    message = parser.parse_report(output).message
    assert message.content == ', "aguments": {"query": "hotels", "city"ty": 1}}'
    every_split_agrees(parser, output)


def test_a_python_literal_left_open_is_kept_in_the_arguments_where_the_text_ran_out() -> None:
    # `Paris` then a quote that never closes: the value cannot end, so the call breaks at the
    # end of the output, the value's text kept (as written: no literal) in its arguments, as a
    # JSON string cut off is.
    parser, _ = format_parser("tools_python_call")
    output = "<|tool_call_start|>[search_records(query='hotels', city=Paris')]<|tool_call_end|>"
    report = parser.parse_report(output)
    assert report.message.content == ""
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [
        {"query": "hotels", "city": "Paris')]<|tool_call_end|>"}]
    assert [(d.kind, d.action, d.offset) for d in report.deviations] == [
        ("malformed_call", "kept_as_content", len(output))]
    every_split_agrees(parser, output)


def test_a_break_right_after_the_generation_prompt_keeps_the_prompt_out_of_the_content() -> None:
    # enable_thinking=false: the parser reads the prompt's `<think>\n</think>\n\n` first; a
    # response format then breaks at the output's first character.
    analysis = analyze(load_template_file(FORMATS / "think_forced_closed.jinja"))
    options = ParseOptions.make(enable_thinking=False, json_schema={"type": "object"})
    parser = generate_parser(analysis, options)
    assert parser.prompt.tail.endswith("</think>\n\n")
    output = "Sure:\n<tool_call>"
    report = parser.parse_report(output)
    assert report.message.content == output
    assert [(d.kind, d.offset) for d in report.deviations] == [("malformed_call", 0)]
    every_split_agrees(parser, output)


@pytest.mark.parametrize(("template", "output", "member"), [
    # A key's typo: the call id's member is not the template's, its text dropped, noted.
    ("CohereForAI-c4ai-command-r7b-12-2024-tool_use", '<|START_ACTION|>[\n    {"too|l_call_id": '
     '"0", "tool_name": "search_records", "parameters": {"query": "hotels", "city": "Paris"}}'
     "\n]<|END_ACTION|>", '"too|l_call_id"'),
    # The arguments' key broken, a string value: that member noted, then the call breaks.
    ("GigaChat3-10B-A1.8B", '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": '
     '"search_records", "argu,ments":" {"query":{"query": "hotels", "city": "Paris"}}',
     '"argu,ments"'),
])
def test_a_member_the_template_does_not_write_is_noted_where_it_starts(
        template: str, output: str, member: str) -> None:
    path = CORPUS / f"{template}.jinja"
    if not path.is_file():
        pytest.skip("the shared corpus is not there")
    found = rendered_call(path)
    assert found is not None
    parser, _ = found
    report = parser.parse_report(output)
    assert [(d.kind, d.action, d.offset) for d in report.deviations][0] == (
        "unknown_member", "dropped", output.index(member))
    every_split_agrees(parser, output)
