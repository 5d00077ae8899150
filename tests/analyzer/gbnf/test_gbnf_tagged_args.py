"""Tests for analyzer/gbnf/tagged_args.py with analyses written by hand for real formats.

Accepted texts were read off the templates: Kimi-K3.jinja (open_tag/close_tag, xtml_type,
xtml_value: `type="number"` etc.), templates_corpus/formats/tools_typed_attr.jinja (its
kind() macro writes `array` for null), MiniMax-M3.jinja (to_xml, `]<]minimax[>[` before every
tag), templates_corpus/formats/tools_echo.jinja (`<k>{{ value }}</k>`, Python str()),
google-gemma-4-31B-it.jinja (format_argument), LFM2-8B-A1B.jinja (`name(k='v')`) and
openbmb-MiniCPM5-1B.jinja (`<param name="k">`).
"""

from __future__ import annotations

from typing import Any

import pytest

from analyzer.gbnf import GrammarResult, build_tool_grammar, check_gbnf_strict, grammar_accepts
from analyzer.model import (
    Analysis,
    ArgumentsAnalysis,
    CallIndexAnalysis,
    Capabilities,
    ContentAnalysis,
    FunctionAnalysis,
    ReasoningAnalysis,
    ToolFormat,
    ToolFormatAnalysis,
    ToolsAnalysis,
    TypedPrefix,
)

SEARCH = {"type": "function", "function": {"name": "search_records", "parameters": {
    "type": "object", "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "exact": {"type": "boolean"},
        "cursor": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "filters": {"type": "object", "properties": {
            "country": {"type": "string"},
            "range": {"type": "object", "properties": {"min": {"type": "integer"},
                                                       "max": {"type": "integer"}}}},
            "additionalProperties": False},
        "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["query"]}}}
TOOLS = [SEARCH]


def _analysis(tools: ToolsAnalysis, turn_end: str = "") -> Analysis:
    return Analysis(
        analyzer_version="test", template_sha256="", template_name="default", handler="auto",
        caps=Capabilities(supports_tools=True, supports_tool_calls=True),
        reasoning=ReasoningAnalysis(), content=ContentAnalysis(turn_end=turn_end), tools=tools,
        preserved_tokens=(), markers=(), comparisons=(), generation_prompts=(), workarounds=())


def _grammar(analysis: Analysis, **options: Any) -> GrammarResult:
    result = build_tool_grammar(analysis, TOOLS, tool_choice="required", **options)
    assert check_gbnf_strict(result.grammar) == []
    return result


def _typed(*pairs: tuple[str, str]) -> tuple[TypedPrefix, ...]:
    return tuple(TypedPrefix(kind, prefix) for kind, prefix in pairs)


# -- per-type value prefixes ------------------------------------------------------------------

KIMI_K3 = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(
        mode=ToolFormat.TAG_WITH_TAGGED, section_start="<|open|>tools<|sep|>",
        section_end="<|close|>tools<|sep|>", per_call_start="<|open|>",
        per_call_end="<|close|>call<|sep|>"),
    function=FunctionAnalysis(name_prefix='call tool="'),
    arguments=ArgumentsAnalysis(
        start="<|sep|>", name_prefix='<|open|>argument key="', name_suffix='" type="',
        value_prefix='string"<|sep|>', value_suffix="<|close|>argument<|sep|>",
        typed_value_prefix='boolean"<|sep|>', typed_value_suffix="<|close|>argument<|sep|>",
        typed_prefixes=_typed(("boolean", 'boolean"<|sep|>'), ("number", 'number"<|sep|>'),
                              ("object", 'object"<|sep|>'), ("array", 'array"<|sep|>'),
                              ("null", 'null"<|sep|>'))),
    call_index=CallIndexAnalysis(present=True, base=1, prefix='" index="', suffix='"')),
    turn_end="<|close|>message<|sep|>")


def kimi_arg(key: str, kind: str, value: str) -> str:
    return f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}<|close|>argument<|sep|>'


def kimi_call(*args: str) -> str:
    return ('<|open|>tools<|sep|><|open|>call tool="search_records" index="1"<|sep|>'
            + "".join(args) + "<|close|>call<|sep|><|close|>tools<|sep|>")


def test_each_value_follows_the_prefix_of_its_own_type() -> None:
    call = kimi_call(kimi_arg("query", "string", "hotels"), kimi_arg("limit", "number", "3"),
                     kimi_arg("exact", "boolean", "true"), kimi_arg("cursor", "null", "null"),
                     kimi_arg("filters", "object", '{"country": "FR", "range": {"min": 1}}'),
                     kimi_arg("tags", "array", '["art", "two words"]'))
    assert grammar_accepts(_grammar(KIMI_K3).grammar, call)


def test_a_nullable_value_takes_either_of_its_types_prefixes() -> None:
    grammar = _grammar(KIMI_K3).grammar
    for kind, value in (("number", "7"), ("null", "null")):
        assert grammar_accepts(grammar, kimi_call(kimi_arg("query", "string", "x"),
                                                  kimi_arg("cursor", kind, value)))


@pytest.mark.parametrize(
    ("kind", "value"),
    [("string", "3"), ("number", "null"), ("boolean", "3"), ("number", "true")],
)
def test_a_value_under_another_types_prefix_is_rejected(kind: str, value: str) -> None:
    call = kimi_call(kimi_arg("query", "string", "x"), kimi_arg("limit", kind, value))
    assert not grammar_accepts(_grammar(KIMI_K3).grammar, call)


def test_the_turn_end_may_follow_the_calls() -> None:
    call = kimi_call(kimi_arg("query", "string", "x"))
    assert grammar_accepts(_grammar(KIMI_K3).grammar, call + "<|close|>message<|sep|>")
    assert not grammar_accepts(_grammar(KIMI_K3).grammar, call + "<|close|>response<|sep|>")


TYPED_ATTR = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_TAGGED),
    function=FunctionAnalysis(name_prefix='<call tool="', name_suffix='">', close="</call>"),
    arguments=ArgumentsAnalysis(
        name_prefix='<arg key="', name_suffix='" type="', value_prefix='string">',
        value_suffix="</arg>", typed_value_prefix='boolean">', typed_value_suffix="</arg>",
        typed_prefixes=_typed(("boolean", 'boolean">'), ("number", 'number">'),
                              ("object", 'object">'), ("array", 'array">'),
                              ("null", 'array">')))))


def test_types_sharing_a_prefix_share_it_in_the_grammar() -> None:
    grammar = _grammar(TYPED_ATTR).grammar
    call = ('<call tool="search_records"><arg key="query" type="string">hotels</arg>'
            '<arg key="cursor" type="array">null</arg><arg key="tags" type="array">["a"]</arg>'
            "</call>")
    assert grammar_accepts(grammar, call)
    assert not grammar_accepts(grammar, call.replace('type="array">null', 'type="null">null'))


# -- values closed by their own name ----------------------------------------------------------

MINIMAX = "]<]minimax[>["
MINIMAX_M3 = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(
        mode=ToolFormat.TAG_WITH_TAGGED, section_start=f"{MINIMAX}<tool_call>",
        section_end=f"{MINIMAX}</tool_call>", per_call_start=MINIMAX,
        per_call_end="</invoke>"),
    function=FunctionAnalysis(name_prefix='<invoke name="', name_suffix='">'),
    arguments=ArgumentsAnalysis(
        start=MINIMAX, name_prefix="<", name_suffix=">", value_suffix=f"{MINIMAX}</",
        typed_value_suffix=f"{MINIMAX}</", suffix_echoes_name=True,
        echo_suffix=f">{MINIMAX}")))


def mm(name: str, inner: str) -> str:
    return f"{MINIMAX}<{name}>{inner}{MINIMAX}</{name}>"


def minimax_call(*args: str) -> str:
    return (f'{MINIMAX}<tool_call>\n{MINIMAX}<invoke name="search_records">'
            + "".join(args) + f"{MINIMAX}</invoke>\n{MINIMAX}</tool_call>")


def test_values_closed_by_their_name_and_nested_elements_are_accepted() -> None:
    call = minimax_call(mm("query", "<b>bold</b> & more"), mm("limit", "3"),
                        mm("exact", "true"), mm("filters", mm("country", "FR") + mm(
                            "range", mm("min", "1") + mm("max", "5"))),
                        mm("tags", mm("item", "art") + mm("item", "two words")))
    assert grammar_accepts(_grammar(MINIMAX_M3).grammar, call)


def test_a_value_closed_by_another_name_is_rejected() -> None:
    call = minimax_call(f"{MINIMAX}<query>hotels{MINIMAX}</city>")
    assert not grammar_accepts(_grammar(MINIMAX_M3).grammar, call)


def test_a_nested_element_the_schema_does_not_declare_is_rejected() -> None:
    call = minimax_call(mm("query", "x"), mm("filters", mm("planet", "Mars")))
    assert not grammar_accepts(_grammar(MINIMAX_M3).grammar, call)


ECHO = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_TAGGED, section_start="<tool_call>",
                              section_end="</tool_call>"),
    function=FunctionAnalysis(name_prefix='<invoke name="', name_suffix='">', close="</invoke>"),
    arguments=ArgumentsAnalysis(name_prefix="<", name_suffix=">", value_suffix="</",
                                typed_value_suffix="</", literal_style="python",
                                suffix_echoes_name=True, echo_suffix=">")))


def test_python_literals_closed_by_their_name_are_accepted() -> None:
    call = ('<tool_call><invoke name="search_records"><query><i>x</i></query>'
            "<exact>True</exact><cursor>None</cursor>"
            "<filters>{'country': 'FR', 'range': {'min': 1}}</filters></invoke></tool_call>")
    grammar = _grammar(ECHO).grammar
    assert grammar_accepts(grammar, call)
    assert not grammar_accepts(grammar, call.replace("True</exact>", "True</exactly>"))


# -- a dialect quoted by a marker -------------------------------------------------------------

Q = '<|"|>'
GEMMA_4 = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_TAGGED, section_start="<|tool_call>",
                              call_separator="<|tool_call>"),
    function=FunctionAnalysis(name_prefix="call:", name_suffix="{", close="<tool_call|>"),
    arguments=ArgumentsAnalysis(end="}", name_suffix=":", value_prefix=Q, value_suffix=Q,
                                separator=",")))


def test_gemma_nested_values_use_bare_keys_and_marker_quotes() -> None:
    call = (f"<|tool_call>call:search_records{{cursor:None,filters:{{country:{Q}FR{Q},"
            f"range:{{max:5,min:1}}}},query:{Q}museums{Q},tags:[{Q}art{Q},{Q}two words{Q}]}}"
            "<tool_call|>")
    grammar = _grammar(GEMMA_4).grammar
    assert grammar_accepts(grammar, call)
    assert not grammar_accepts(grammar, call.replace(f"country:{Q}FR{Q}", 'country:"FR"'))
    assert not grammar_accepts(grammar, call.replace("min:1", "min:one"))


# -- quoted literals and CDATA ----------------------------------------------------------------

LFM2 = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_TAGGED,
                              section_start="<|tool_call_start|>[",
                              section_end="]<|tool_call_end|>", call_separator=", "),
    function=FunctionAnalysis(name_suffix="("),
    arguments=ArgumentsAnalysis(end=")", name_suffix="=", value_prefix="'", value_suffix="'",
                                separator=", ", literal_style="python")))


def test_between_plain_quotes_either_quote_and_escapes_are_accepted() -> None:
    grammar = _grammar(LFM2).grammar
    template = "<|tool_call_start|>[search_records(query='a\nb', limit=3)]<|tool_call_end|>"
    model = '<|tool_call_start|>[search_records(query="it\'s \\"x\\"\\n", tags=["a"])]' \
            "<|tool_call_end|>"
    assert grammar_accepts(grammar, template)  # the template writes raw text between quotes
    assert grammar_accepts(grammar, model)
    assert not grammar_accepts(grammar, model.replace('query="', "query=\u201c"))


MINICPM5 = _analysis(ToolsAnalysis(
    format=ToolFormatAnalysis(mode=ToolFormat.TAG_WITH_TAGGED),
    function=FunctionAnalysis(name_prefix='<function name="', name_suffix='">',
                              close="</function>"),
    arguments=ArgumentsAnalysis(name_prefix='<param name="', name_suffix='">',
                                value_suffix="</param>", typed_value_suffix="</param>")))


def test_xml_style_values_may_be_cdata_sections_holding_the_closer() -> None:
    call = ('<function name="search_records"><param name="query"><![CDATA[<a>x</a> </param>]]>'
            "</param></function>")
    assert grammar_accepts(_grammar(MINICPM5).grammar, call)
    assert not grammar_accepts(_grammar(MINICPM5).grammar, call.replace("]]>", "]>"))
