"""The lab's seam to the parser generator: options, parser and grammar, live streaming."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import analyzer
from lab.analyses import engine, parsing, samples


def _analysis_json(corpus: Path, name: str) -> str:
    source = (corpus / f"{name}.jinja").read_text()
    return analyzer.analysis_to_json(analyzer.analyze(engine.load_pasted(source)))


@pytest.fixture(scope="module")
def qwen3(corpus_templates: Path) -> str:
    return _analysis_json(corpus_templates, "Qwen-Qwen3-0.6B")


@pytest.fixture(scope="module")
def qwen3_sample(qwen3: str, corpus_templates: Path) -> samples.Sample:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    return samples.build_sample(source, "", "", qwen3)


def qwen3_call(sample: str) -> dict[str, Any]:
    """The JSON inside Qwen3's <tool_call>...</tool_call> (the format read off its source)."""
    start = sample.index("<tool_call>") + len("<tool_call>")
    return dict(json.loads(sample[start : sample.rindex("</tool_call>")]))


def test_generate_gives_peg_rules_and_a_grammar_triggered_by_the_call_marker(
    qwen3: str, qwen3_sample: samples.Sample
) -> None:
    generated = parsing.generate(qwen3, qwen3_sample.options())
    assert generated.available, generated.problem
    assert generated.peg.strip() and generated.gbnf.strip()
    assert any("<tool_call>" in trigger for trigger in generated.triggers)
    assert "<tool_call>" in generated.preserved_tokens


def test_generate_reports_bad_tools_instead_of_raising(qwen3: str) -> None:
    options = parsing.ParserOptions(tools=[{"type": "function", "function": "not an object"}])
    generated = parsing.generate(qwen3, options)
    assert not generated.available
    assert generated.problem


def test_streaming_the_sample_in_small_chunks_yields_its_tool_call(
    qwen3: str, qwen3_sample: samples.Sample
) -> None:
    live = parsing.open_stream(qwen3, qwen3_sample.options())
    assert live is not None
    sample = qwen3_sample.text
    for at in range(0, len(sample), 3):
        live.feed(sample[at : at + 3])
    state = live.finish()
    assert state.problems == ()
    [call] = state.tool_calls
    expected = qwen3_call(sample)
    assert call.name == expected["name"]
    assert json.loads(call.arguments) == expected["arguments"]


def test_typing_after_finish_restarts_over_the_whole_text(qwen3: str) -> None:
    live = parsing.open_stream(qwen3, parsing.ParserOptions())
    assert live is not None
    live.feed("Hello")
    assert live.finish().content == "Hello"
    assert live.feed(" world").content.startswith("Hello")
    assert live.finish().content == "Hello world"


def test_options_from_the_page_keep_the_base_for_malformed_fields() -> None:
    base = parsing.ParserOptions(tools=[{"type": "function"}], enable_thinking=True)
    sent: dict[str, Any] = {
        "tools": "oops",
        "enable_thinking": "maybe",
        "reasoning_format": "none",
        "parallel_tool_calls": True,
    }
    options = parsing.options_from_dict(sent, base)
    assert options.tools == base.tools and options.enable_thinking is True
    assert (options.reasoning_format, options.parallel_tool_calls) == ("none", True)


def test_tool_choice_required_makes_the_grammar_apply_from_the_first_character(
    qwen3: str, qwen3_sample: samples.Sample
) -> None:
    base = qwen3_sample.options()
    auto = parsing.generate(qwen3, base)
    required = parsing.generate(qwen3, replace(base, tool_choice="required"))
    assert auto.lazy and auto.triggers
    assert required.available and not required.lazy and required.triggers == ()
    # Qwen3's calls sit in <tool_call>: required puts them in the root rule, not behind a trigger.
    root_rule = re.split(r"\n(?=[a-z0-9-]+ ::= )", required.gbnf)[0]  # long rules wrap
    assert root_rule.startswith("root ::= ") and "tool-calls" in root_rule


def test_tool_choice_none_keeps_calls_as_content_and_drops_the_grammar(
    qwen3: str, qwen3_sample: samples.Sample
) -> None:
    options = replace(qwen3_sample.options(), tool_choice="none")
    assert parsing.generate(qwen3, options).gbnf == ""
    live = parsing.open_stream(qwen3, options)
    assert live is not None
    live.feed(qwen3_sample.text)
    state = live.finish()
    assert state.tool_calls == ()
    assert "<tool_call>" in state.content


ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}


def test_a_json_schema_gives_a_response_format_grammar_for_that_schema(
    qwen3: str, qwen3_sample: samples.Sample
) -> None:
    options = replace(qwen3_sample.options(), json_schema=ANSWER_SCHEMA)
    generated = parsing.generate(qwen3, options)
    assert generated.available and not generated.lazy
    assert '"\\"answer\\""' in generated.gbnf  # the schema's one property, quoted as JSON
    live = parsing.open_stream(qwen3, options)
    assert live is not None
    live.feed('<think>Just the number.</think>\n{"answer": 42}')
    state = live.finish()
    assert (state.reasoning, state.content) == ("Just the number.", '{"answer": 42}')


def test_options_from_the_page_read_tool_choice_and_schema_and_refuse_bad_ones() -> None:
    base = parsing.ParserOptions(tool_choice="required", json_schema=ANSWER_SCHEMA)
    good = parsing.options_from_dict({"tool_choice": "none", "json_schema": None}, base)
    assert (good.tool_choice, good.json_schema) == ("none", None)
    bad = parsing.options_from_dict({"tool_choice": "always", "json_schema": [1]}, base)
    assert (bad.tool_choice, bad.json_schema) == ("required", ANSWER_SCHEMA)


UNKNOWN_CALL = (
    'Let me check.\n<tool_call>\n{"name": "no_such_function", "arguments": {}}\n</tool_call>'
)


def test_a_call_to_an_unknown_function_stays_content_and_says_why(
    qwen3: str, qwen3_sample: samples.Sample
) -> None:
    live = parsing.open_stream(qwen3, qwen3_sample.options())
    assert live is not None
    for at in range(0, len(UNKNOWN_CALL), 4):
        live.feed(UNKNOWN_CALL[at : at + 4])
    state = live.finish()
    assert state.content == UNKNOWN_CALL and state.tool_calls == ()
    [problem] = state.problems
    # "Let me check.\n" and "<tool_call>\n" are 26 characters; `{"name": "` 10 more: the
    # function name starts at offset 36, column 11 of line 3.
    assert (problem.kept, problem.offset, problem.line, problem.column) == (
        "<tool_call>",
        36,
        3,
        11,
    )
    assert "expected `get_weather`" in problem.message and "found `no_such_fun`" in problem.message
    assert problem.context == '{"name": "no_such_function", "arguments": {}}\n' + " " * 10 + "^"


def test_a_break_in_the_parse_is_placed_in_the_typed_output_not_the_prompt(
    qwen3: str,
) -> None:
    # enable_thinking=false: the parser first reads the prompt's `<think>\n\n</think>\n\n`.
    options = parsing.ParserOptions(enable_thinking=False, json_schema=ANSWER_SCHEMA)
    live = parsing.open_stream(qwen3, options)
    assert live is not None
    live.feed("Sure:\n<tool_call>")
    state = live.finish()
    # The parse no longer stops: the break is a deviation placed in the typed output, and the
    # text from it on is kept (the panels never go blank).
    assert state.problems == ()
    [deviation] = state.deviations
    assert (deviation.kind, deviation.offset, deviation.line, deviation.column) == (
        "malformed_call", 0, 1, 1)
    assert deviation.context == "Sure:\n^"
    assert state.content == "Sure:\n<tool_call>"
