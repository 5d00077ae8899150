"""Tests for analyzer/gbnf/tool_grammar.py with analyses written by hand for real formats.

The accepted texts are what the corpus templates render for these calls (Hermes 2 Pro,
functionary v3.1, Qwen3-Coder, Mistral Small 3.2, Llama 3.1, DeepSeek V3.1), read off the
templates' tool-call blocks.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.gbnf import (
    GrammarRequestError,
    GrammarResult,
    Trigger,
    TriggerKind,
    build_tool_grammar,
    check_gbnf_strict,
    grammar_accepts,
    match_text,
)
from analyzer.model import (
    Analysis,
    ArgumentsAnalysis,
    CallIdAnalysis,
    CallIdPosition,
    Capabilities,
    ContentAnalysis,
    ContentMode,
    FunctionAnalysis,
    GenerationPrompt,
    ReasoningAnalysis,
    ReasoningMode,
    ToolFormat,
    ToolFormatAnalysis,
    ToolsAnalysis,
)

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object",
    "properties": {"location": {"type": "string"}, "days": {"type": "integer"},
                   "metric": {"type": "boolean"}},
    "required": ["location", "days"]}}}
SEARCH = {"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}
TOOLS = [WEATHER, SEARCH]


def _analysis(
    tools: ToolsAnalysis,
    *,
    reasoning: ReasoningAnalysis | None = None,
    content: ContentAnalysis | None = None,
    prompts: tuple[GenerationPrompt, ...] = (),
) -> Analysis:
    return Analysis(
        analyzer_version="test", template_sha256="", template_name="default", handler="auto",
        caps=Capabilities(supports_tools=True, supports_tool_calls=True),
        reasoning=reasoning or ReasoningAnalysis(), content=content or ContentAnalysis(),
        tools=tools, preserved_tokens=(), markers=(), comparisons=(),
        generation_prompts=prompts, workarounds=(),
    )


HERMES = _analysis(ToolsAnalysis(format=ToolFormatAnalysis(
    mode=ToolFormat.JSON_NATIVE, per_call_start="<tool_call>", per_call_end="</tool_call>",
    call_separator="\n", parameter_order=("name", "arguments"))))
FUNCTIONARY = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_JSON),
    function=FunctionAnalysis(name_prefix="<function=", name_suffix=">", close="</function>")))
QWEN3_CODER = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_TAGGED, per_call_start="<tool_call>",
                              per_call_end="</tool_call>", call_separator="\n"),
    function=FunctionAnalysis(name_prefix="<function=", name_suffix=">", close="</function>"),
    arguments=ArgumentsAnalysis(name_prefix="<parameter=", name_suffix=">",
                                value_suffix="</parameter>", typed_value_suffix="</parameter>",
                                separator="\n", literal_style="python")))
MISTRAL = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_JSON, per_call_start="[TOOL_CALLS]"),
    arguments=ArgumentsAnalysis(start="[ARGS]"),
    call_id=CallIdAnalysis(pos=CallIdPosition.BETWEEN_FUNC_AND_ARGS, prefix="[CALL_ID]")))
LLAMA31 = _analysis(ToolsAnalysis(format=ToolFormatAnalysis(
    mode=ToolFormat.JSON_NATIVE, args_field="parameters", parameter_order=("name", "parameters"))))
DEEPSEEK = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(
        mode=ToolFormat.TAG_WITH_JSON, section_start="<｜tool▁calls▁begin｜>",
        section_end="<｜tool▁calls▁end｜>", per_call_start="<｜tool▁call▁begin｜>",
        per_call_end="<｜tool▁call▁end｜>"),
    arguments=ArgumentsAnalysis(start="<｜tool▁sep｜>")))

HERMES_CALL = ('<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris", '
               '"days": 3, "metric": true}}\n</tool_call>')
FUNCTIONARY_CALL = '<function=get_weather>{"location": "Paris", "days": 3}</function>'
QWEN3_CODER_CALL = ("<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n"
                    "</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n"
                    "</parameter>\n</function>\n</tool_call>")
MISTRAL_CALL = ('[TOOL_CALLS]get_weather[CALL_ID]call00001[ARGS]{"location": "Paris", '
                '"days": 3, "metric": true}')
LLAMA31_CALL = '{"name": "get_weather", "parameters": {"location": "Paris", "days": 3}}'
DEEPSEEK_CALL = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>'
                 '{"location": "Paris", "days": 3}<｜tool▁call▁end｜><｜tool▁calls▁end｜>')

FORMATS = {
    "hermes": (HERMES, HERMES_CALL),
    "functionary": (FUNCTIONARY, FUNCTIONARY_CALL),
    "qwen3-coder": (QWEN3_CODER, QWEN3_CODER_CALL),
    "mistral": (MISTRAL, MISTRAL_CALL),
    "llama-3.1": (LLAMA31, LLAMA31_CALL),
    "deepseek": (DEEPSEEK, DEEPSEEK_CALL),
}


def _grammar(analysis: Analysis, **options: Any) -> GrammarResult:
    result = build_tool_grammar(analysis, TOOLS, **options)
    assert check_gbnf_strict(result.grammar) == []
    return result


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("choice", ["auto", "required"])
def test_rendered_call_is_accepted(fmt: str, choice: str) -> None:
    analysis, call = FORMATS[fmt]
    assert match_text(_grammar(analysis, tool_choice=choice).grammar, call).accepted


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("corrupt", "where"),
    [
        (lambda c: c.replace("get_weather", "get_wether"), "get_we"),
        (lambda c: c.replace("3", "three", 1), "three"),
    ],
    ids=["wrong-function-name", "wrong-argument-type"],
)
def test_corrupted_call_is_rejected_where_it_goes_wrong(fmt: str, corrupt: Any, where: str) -> None:
    analysis, call = FORMATS[fmt]
    bad = corrupt(call)
    found = match_text(_grammar(analysis).grammar, bad)
    assert not found.accepted
    assert bad.index(where) <= found.offset <= bad.index(where) + len(where)


@pytest.mark.parametrize(
    ("fmt", "bad"),
    [
        ("hermes", HERMES_CALL.replace('"location": "Paris", ', "")),
        ("hermes", HERMES_CALL.replace("}}", "}")),
        ("hermes", HERMES_CALL.replace("</tool_call>", "</tool_calls>")),
        ("functionary", FUNCTIONARY_CALL.replace('"days": 3', '"days": ')),
        ("functionary", FUNCTIONARY_CALL.replace("</function>", "</func>")),
        ("qwen3-coder", QWEN3_CODER_CALL.replace("<parameter=days>\n3\n</parameter>\n", "")),
        ("qwen3-coder", QWEN3_CODER_CALL.replace("<function=", "<func=")),
        ("qwen3-coder", QWEN3_CODER_CALL.replace("True", "yes")),
        ("mistral", MISTRAL_CALL.replace("[ARGS]", "[ARG]")),
        ("mistral", MISTRAL_CALL.replace('"location": "Paris", ', "")),
        ("llama-3.1", LLAMA31_CALL.replace('"parameters"', '"arguments"')),
        ("deepseek", DEEPSEEK_CALL.replace("<｜tool▁sep｜>", "<|tool▁sep|>")),
    ],
    ids=["missing-arg", "broken-json", "wrong-end-marker", "broken-value", "wrong-close",
         "missing-tagged-arg", "wrong-name-prefix", "bad-boolean", "wrong-args-marker",
         "missing-json-arg", "wrong-field", "ascii-lookalike-marker"],
)
def test_malformed_call_is_rejected(fmt: str, bad: str) -> None:
    analysis, _ = FORMATS[fmt]
    assert not grammar_accepts(_grammar(analysis, tool_choice="required").grammar, bad)


def test_auto_choice_is_lazy_and_triggers_on_the_first_marker() -> None:
    assert _grammar(HERMES).lazy
    assert _grammar(HERMES).triggers == (Trigger(TriggerKind.WORD, "<tool_call>"),)
    assert _grammar(DEEPSEEK).triggers == (Trigger(TriggerKind.WORD, "<｜tool▁calls▁begin｜>"),)
    assert _grammar(FUNCTIONARY).triggers == (Trigger(TriggerKind.WORD, "<function="),)


def test_bare_json_calls_trigger_on_a_pattern_anchored_at_the_output_start() -> None:
    (trigger,) = _grammar(LLAMA31).triggers
    assert trigger == Trigger(TriggerKind.PATTERN_FULL,
                              '^\\s*(\\{\\s*["\'](?:name|parameters)["\'])[\\s\\S]*$')


def test_calls_without_any_marker_trigger_on_the_function_names() -> None:
    bare = _analysis(ToolsAnalysis(
        format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_JSON),
        function=FunctionAnalysis(name_suffix="\n")))
    result = _grammar(bare)
    assert result.triggers == (Trigger(TriggerKind.PATTERN, "((?:get_weather|search))"),)
    assert grammar_accepts(result.grammar, 'search\n{"query": "x"}')


def test_required_choice_covers_content_before_the_calls() -> None:
    result = _grammar(HERMES, tool_choice="required")
    assert (result.lazy, result.triggers) == (False, ())
    assert grammar_accepts(result.grammar, "Let me look that up.\n" + HERMES_CALL)
    assert not grammar_accepts(result.grammar, "Just text, no call.")
    assert not grammar_accepts(result.grammar, HERMES_CALL + "\nand some text after")


def test_parallel_calls_need_the_option() -> None:
    two = HERMES_CALL + "\n" + HERMES_CALL.replace("Paris", "Rome")
    assert grammar_accepts(_grammar(HERMES, parallel_tool_calls=True).grammar, two)
    assert not grammar_accepts(_grammar(HERMES).grammar, two)


def test_parallel_tagged_calls_may_use_different_functions() -> None:
    search = ("<tool_call>\n<function=search>\n<parameter=query>\nweather in <Paris>\n"
              "</parameter>\n</function>\n</tool_call>")
    grammar = _grammar(QWEN3_CODER, parallel_tool_calls=True).grammar
    assert grammar_accepts(grammar, QWEN3_CODER_CALL + "\n" + search)


def test_tagged_arguments_may_come_in_any_order_but_each_required_one_once() -> None:
    grammar = _grammar(QWEN3_CODER).grammar
    reordered = ("<tool_call>\n<function=get_weather>\n<parameter=metric>\nfalse\n</parameter>\n"
                 "<parameter=days>\n3\n</parameter>\n<parameter=location>\nParis\n</parameter>\n"
                 "</function>\n</tool_call>")
    assert grammar_accepts(grammar, reordered)
    doubled = reordered.replace("<parameter=location>", "<parameter=days>\n4\n</parameter>\n"
                                "<parameter=location>")
    assert not grammar_accepts(grammar, doubled)


def test_mistral_call_id_is_optional() -> None:
    grammar = _grammar(MISTRAL).grammar
    assert grammar_accepts(grammar, MISTRAL_CALL.replace("[CALL_ID]call00001", ""))


def test_python_dict_calls_accept_single_quotes() -> None:
    seed = _analysis(ToolsAnalysis(format=ToolFormatAnalysis(
        mode=ToolFormat.JSON_NATIVE, per_call_start="<tool_call>", per_call_end="</tool_call>",
        uses_python_dicts=True)))
    call = "<tool_call>{'name': 'get_weather', 'arguments': {'location': 'Paris', 'days': 3, " \
           "'metric': True}}</tool_call>"
    assert grammar_accepts(_grammar(seed).grammar, call)


@pytest.mark.parametrize(
    "fields",
    [{"function_field": "function"},
     {"name_field": "function.name", "args_field": "function.arguments"}],
    ids=["function-field", "dotted-fields"],
)
def test_nested_function_objects_and_id_fields_are_understood(fields: dict[str, str]) -> None:
    nested = _analysis(ToolsAnalysis(format=ToolFormatAnalysis(
        mode=ToolFormat.JSON_NATIVE, section_start="<TOOLCALL>", section_end="</TOOLCALL>",
        id_field="id", tools_array_wrapped=True, **fields)))
    call = ('<TOOLCALL>[{"id": "c1", "type": "function", "function": {"name": "search", '
            '"arguments": {"query": "x"}}}, {"function": {"name": "search", "arguments": '
            '{"query": "y"}}}]</TOOLCALL>')
    assert grammar_accepts(_grammar(nested, parallel_tool_calls=True).grammar, call)
    assert not grammar_accepts(_grammar(nested, parallel_tool_calls=True).grammar,
                               call.replace('"function": {"name": "search", "arguments": '
                                            '{"query": "y"}}', '"name": "search"'))


def test_function_name_as_key_is_understood() -> None:
    apertus = _analysis(ToolsAnalysis(format=ToolFormatAnalysis(
        mode=ToolFormat.JSON_NATIVE, section_start="<|tools_prefix|>",
        section_end="<|tools_suffix|>", fun_name_is_key=True, tools_array_wrapped=True)))
    grammar = _grammar(apertus).grammar
    assert grammar_accepts(grammar, '<|tools_prefix|>[{"search": {"query": "x"}}]'
                                    '<|tools_suffix|>')
    assert not grammar_accepts(grammar, '<|tools_prefix|>[{"lookup": {"query": "x"}}]'
                                        '<|tools_suffix|>')


THINKING = ReasoningAnalysis(mode=ReasoningMode.FORCED_OPEN, start="<think>", end="</think>")


def test_forced_open_reasoning_must_close_before_the_calls() -> None:
    analysis = _analysis(HERMES.tools, reasoning=THINKING, prompts=(
        GenerationPrompt(True, "<|im_start|>assistant\n<think>\n", "forced-open"),))
    grammar = _grammar(analysis, tool_choice="required", enable_thinking=True).grammar
    assert grammar_accepts(grammar, "I should call </p> the tool.\n</think>\n\n" + HERMES_CALL)
    assert not grammar_accepts(grammar, HERMES_CALL)


def test_a_closed_prompt_leaves_no_reasoning_block() -> None:
    grammar = _grammar(_analysis(HERMES.tools, reasoning=THINKING), tool_choice="required",
                       generation_prompt="<|im_start|>assistant\n<think>\n\n</think>\n\n").grammar
    assert grammar_accepts(grammar, HERMES_CALL)  # forced-open would demand "</think>" first
    assert "reasoning" not in grammar


def test_optional_reasoning_block_may_precede_the_calls() -> None:
    tag = ReasoningAnalysis(mode=ReasoningMode.TAG_BASED, start="<think>", end="</think>")
    grammar = _grammar(_analysis(HERMES.tools, reasoning=tag), tool_choice="required").grammar
    assert grammar_accepts(grammar, "<think>hmm <tool_call> maybe</think>" + HERMES_CALL)
    assert grammar_accepts(grammar, HERMES_CALL)


def test_wrapped_content_goes_inside_its_markers() -> None:
    wrapped = ContentAnalysis(mode=ContentMode.ALWAYS_WRAPPED, start="<|START_RESPONSE|>",
                              end="<|END_RESPONSE|>")
    grammar = _grammar(_analysis(HERMES.tools, content=wrapped), tool_choice="required").grammar
    assert grammar_accepts(grammar, "<|START_RESPONSE|>On it.<|END_RESPONSE|>" + HERMES_CALL)
    assert not grammar_accepts(grammar, "On it." + HERMES_CALL)


def test_response_format_wins_over_tools() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}},
              "required": ["answer"]}
    result = _grammar(HERMES, json_schema=schema)
    assert not result.lazy
    assert grammar_accepts(result.grammar, '{"answer": 42}')
    assert grammar_accepts(result.grammar, '```json\n{"answer": 42}\n```')
    assert not grammar_accepts(result.grammar, HERMES_CALL)


def test_no_tools_or_choice_none_gives_no_grammar() -> None:
    assert build_tool_grammar(HERMES, [], tool_choice="auto").grammar == ""
    assert build_tool_grammar(HERMES, TOOLS, tool_choice="none").grammar == ""


def test_a_named_tool_choice_allows_only_that_function() -> None:
    result = _grammar(HERMES, tool_choice={"type": "function", "function": {"name": "search"}})
    assert not result.lazy
    assert grammar_accepts(result.grammar, '<tool_call>{"name": "search", "arguments": '
                                           '{"query": "x"}}</tool_call>')
    assert not grammar_accepts(result.grammar, HERMES_CALL)


def test_preserved_tokens_hold_the_structural_markers() -> None:
    assert _grammar(DEEPSEEK).preserved_tokens == (
        "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tool_choice": "sometimes"},
         "tool_choice: expected 'auto', 'required', 'none' or a function, found 'sometimes'"),
        ({"tool_choice": {"type": "function", "function": {"name": "nope"}}},
         "tool_choice names function 'nope', but the tools are ['get_weather', 'search']"),
    ],
)
def test_bad_requests_raise_with_a_readable_message(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(GrammarRequestError) as caught:
        build_tool_grammar(HERMES, TOOLS, **kwargs)
    assert str(caught.value) == message


def test_required_calls_need_a_tool_format() -> None:
    with pytest.raises(GrammarRequestError, match="found no tool-call format"):
        build_tool_grammar(_analysis(ToolsAnalysis()), TOOLS, tool_choice="required")


def test_malformed_tool_definitions_are_refused() -> None:
    with pytest.raises(GrammarRequestError, match=r"tools\[1\]: expected"):
        build_tool_grammar(HERMES, [WEATHER, {"type": "function"}])
    with pytest.raises(GrammarRequestError, match="function names must be unique"):
        build_tool_grammar(HERMES, [WEATHER, WEATHER])


# Free text full of marker fragments must still fit: llguidance lexes greedily, and
# multi-character marker literals once swallowed text like "</p" before "</parameter>".
FRAGMENTS = st.lists(st.sampled_from(["a", " ", "\n", "<", "/", "</", "</par", "</parameter",
                                      "<tool_", "</think", "<function", ">", "}"]), max_size=8)


@settings(max_examples=40, deadline=None)
@given(value=FRAGMENTS.map("".join), thought=FRAGMENTS.map("".join))
def test_free_text_with_marker_fragments_is_accepted(value: str, thought: str) -> None:
    analysis = _analysis(QWEN3_CODER.tools, reasoning=THINKING)
    grammar = build_tool_grammar(analysis, TOOLS, tool_choice="required",
                                 generation_prompt="<think>\n").grammar
    call = QWEN3_CODER_CALL.replace("\nParis\n", value if value.strip() else "x")
    if "</think>" in thought or "</parameter>" in value:
        return
    assert grammar_accepts(grammar, f"{thought}</think>\n{call}")
