"""Tests for analyzer/gbnf/handlers.py: grammars of the dedicated handlers' formats.

Texts are what openai-gpt-oss-120b.jinja, muse-glimmer.jinja and
meetkai-functionary-medium-v3.2.jinja render for an assistant turn after their generation
prompt (`<|start|>assistant`, `<|start|>assistant`, `>>>`), and model outputs from llama.cpp's
parse vectors for those templates (../shared/corpus/vectors, seq 317, 377, 385-390).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from analyzer.gbnf import (
    GrammarResult,
    Trigger,
    TriggerKind,
    build_tool_grammar,
    check_gbnf_strict,
    grammar_accepts,
)
from analyzer.model import Analysis, Capabilities, ContentAnalysis, ReasoningAnalysis, ToolsAnalysis

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["location"]}}}
SPECIAL = {"type": "function", "function": {"name": "special_function", "parameters": {
    "type": "object", "properties": {"arg1": {"type": "integer"}}, "required": ["arg1"]}}}
TOOLS = [WEATHER, SPECIAL]


def _analysis(handler: str) -> Analysis:
    return Analysis(
        analyzer_version="test", template_sha256="", template_name="default", handler=handler,
        caps=Capabilities(supports_tools=True, supports_tool_calls=True),
        reasoning=ReasoningAnalysis(), content=ContentAnalysis(), tools=ToolsAnalysis(),
        preserved_tokens=(), markers=(), comparisons=(), generation_prompts=(), workarounds=())


GPT_OSS = _analysis("gpt-oss-channels")
MUSE = _analysis("muse-atem-recipients")
FUNCTIONARY = _analysis("functionary-v3.2-recipients")


def _grammar(analysis: Analysis, choice: str = "required", **options: Any) -> GrammarResult:
    result = build_tool_grammar(analysis, TOOLS, tool_choice=choice, **options)
    assert check_gbnf_strict(result.grammar) == []
    return result


def _from_trigger(result: GrammarResult, text: str) -> str | None:
    """The text from where the first trigger fires (None if none does)."""
    starts = []
    for trigger in result.triggers:
        if trigger.kind == TriggerKind.WORD:
            starts.append(text.find(trigger.value))
        else:
            found = re.search(trigger.value, text)
            starts.append(found.start(1) if found else -1)
    fired = [s for s in starts if s >= 0]
    return text[min(fired):] if fired else None


GPT_OSS_CALL = ' to=functions.get_weather<|channel|>commentary json<|message|>' \
               '{"location": "Paris"}<|call|>'
GPT_OSS_ANALYSIS = "<|channel|>analysis<|message|>The user wants <b>weather</b>.<|end|>" \
                   "<|start|>assistant"

GPT_OSS_OUTPUTS = [
    GPT_OSS_CALL,
    GPT_OSS_ANALYSIS + GPT_OSS_CALL,
    ' to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}',
    '<|channel|>analysis to=functions.special_function<|message|>{"arg1": 1}',
    ' to=functions.special_function<|channel|>analysis <|constrain|>json<|message|>{"arg1": 1}',
    '<|channel|>commentary to=functions.special_function<|message|>{"arg1": 1}',
    "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant to=functions."
    'special_function<|channel|>analysis<|message|>{"arg1": 1}',
]


@pytest.mark.parametrize("output", GPT_OSS_OUTPUTS)
def test_gpt_oss_calls_with_or_without_analysis_first_are_accepted(output: str) -> None:
    assert grammar_accepts(_grammar(GPT_OSS).grammar, output)


@pytest.mark.parametrize("output", GPT_OSS_OUTPUTS)
def test_gpt_oss_lazy_grammar_accepts_the_call_from_its_recipient(output: str) -> None:
    result = _grammar(GPT_OSS, "auto")
    assert result.lazy and result.triggers == (Trigger(TriggerKind.WORD, " to=functions."),)
    text = _from_trigger(result, output)
    assert text is not None and grammar_accepts(result.grammar, text)


@pytest.mark.parametrize(
    "bad",
    [GPT_OSS_CALL.replace("get_weather", "get_wether"),
     GPT_OSS_CALL.replace('"location"', '"place"'),
     "<|channel|>final<|message|>Paris is sunny.<|return|>",
     GPT_OSS_ANALYSIS.replace("<|end|>", "") + GPT_OSS_CALL],
    ids=["unknown-function", "unknown-argument", "no-call", "analysis-never-ends"],
)
def test_gpt_oss_malformed_outputs_are_rejected(bad: str) -> None:
    assert not grammar_accepts(_grammar(GPT_OSS).grammar, bad)


def test_gpt_oss_parallel_calls_are_separate_messages() -> None:
    two = GPT_OSS_CALL + "<|start|>assistant" + GPT_OSS_CALL.replace("Paris", "Rome")
    assert grammar_accepts(_grammar(GPT_OSS, parallel_tool_calls=True).grammar, two)
    assert not grammar_accepts(_grammar(GPT_OSS).grammar, two)


def test_gpt_oss_final_answer_does_not_fire_the_trigger() -> None:
    result = _grammar(GPT_OSS, "auto")
    assert _from_trigger(result, "<|channel|>final<|message|>Go to Paris.<|return|>") is None


def test_handler_tokens_are_preserved() -> None:
    assert {"<|channel|>", "<|message|>", "<|call|>"} <= set(_grammar(GPT_OSS).preserved_tokens)


MUSE_CALL = (' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
             '<atem:parameter name="location">Paris</atem:parameter>\n'
             "<atem:parameter name=\"days\">3</atem:parameter>\n</atem:invoke>\n"
             "</atem:function_calls>")
MUSE_OUTPUTS = [
    MUSE_CALL,
    " to=self<|message|>The user wants weather.<|eom|><|start|>assistant" + MUSE_CALL,
    " to=user<|message|>Hello, world!\nWhat's up?<|eom|><|start|>assistant to=special_function"
    '<|message|><atem:function_calls>\n<atem:invoke name="special_function">\n'
    '<atem:parameter name="arg1">1</atem:parameter>\n</atem:invoke>\n</atem:function_calls>',
]


@pytest.mark.parametrize("output", MUSE_OUTPUTS)
@pytest.mark.parametrize("choice", ["required", "auto"])
def test_muse_calls_after_notes_are_accepted(output: str, choice: str) -> None:
    result = _grammar(MUSE, choice)
    text = _from_trigger(result, output) if result.lazy else output
    assert text is not None and grammar_accepts(result.grammar, text)


@pytest.mark.parametrize(
    "bad",
    [MUSE_CALL.replace('<atem:invoke name="get_weather">', '<atem:invoke name="special_function">'),
     MUSE_CALL.replace("location", "place"),
     MUSE_CALL.replace(">3<", ">three<")],
    ids=["invoke-names-another-function", "unknown-parameter", "word-for-integer"],
)
def test_muse_malformed_calls_are_rejected(bad: str) -> None:
    assert not grammar_accepts(_grammar(MUSE).grammar, bad)


def test_muse_an_atem_block_sent_to_the_user_does_not_fire_the_trigger() -> None:
    text = ' to=user<|message|>You invoke it like this:\n<atem:function_calls>\n' \
           '<atem:invoke name="special_function">\n<atem:parameter name="arg1">1' \
           "</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eot|>"
    assert _from_trigger(_grammar(MUSE, "auto"), text) is None


def test_muse_parallel_calls_follow_the_end_of_message() -> None:
    two = MUSE_CALL + "<|eom|><|start|>assistant" + MUSE_CALL.replace("Paris", "Rome")
    assert grammar_accepts(_grammar(MUSE, parallel_tool_calls=True).grammar, two)


FUNCTIONARY_OUTPUTS = [
    'get_weather\n{"location": "Paris"}',
    'special_function\n{"arg1": 1}',
    'all\nLet me check >> the weather.>>>get_weather\n{"location": "Paris"}',
]


@pytest.mark.parametrize("output", FUNCTIONARY_OUTPUTS)
@pytest.mark.parametrize("choice", ["required", "auto"])
def test_functionary_recipient_calls_are_accepted(output: str, choice: str) -> None:
    result = _grammar(FUNCTIONARY, choice)
    text = _from_trigger(result, output) if result.lazy else output
    assert text is not None and grammar_accepts(result.grammar, text)


def test_functionary_trigger_is_a_recipient_line_not_a_mention() -> None:
    result = _grammar(FUNCTIONARY, "auto")
    assert _from_trigger(result, "all\nI could call get_weather\nfor you.") is None
    assert _from_trigger(result, 'all\nSure.>>>get_weather\n{}') == 'get_weather\n{}'


def test_functionary_parallel_calls_are_joined_by_the_recipient_marker() -> None:
    two = 'get_weather\n{"location": "Paris"}>>>special_function\n{"arg1": 2}'
    assert grammar_accepts(_grammar(FUNCTIONARY, parallel_tool_calls=True).grammar, two)
    assert not grammar_accepts(_grammar(FUNCTIONARY).grammar, two)
    assert not grammar_accepts(_grammar(FUNCTIONARY).grammar, "all\nNo call at all.")


def test_tool_choice_none_gives_no_grammar_for_a_handler_either() -> None:
    assert build_tool_grammar(GPT_OSS, TOOLS, tool_choice="none").grammar == ""
