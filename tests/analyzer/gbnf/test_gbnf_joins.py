"""Markers are printed as whole literals where llguidance reads them alike (analyzer.gbnf.joins).

A grammar built with `GrammarBuilder(join=False)` spells every marker one character per
literal, as grammars did before: it is the reference the joined grammar must agree with.
"""

from __future__ import annotations

import pytest
from test_gbnf_corpus import NAMES, TOOLS, _analysis, _from_trigger, _rendered

from analyzer import analyze
from analyzer.gbnf import GrammarResult, build_tool_grammar, check_gbnf_strict, match_text
from analyzer.gbnf.builder import LINE_WIDTH, GrammarBuilder, literal
from analyzer.gbnf.joins import join_runs, literal_runs, spelled_runs
from analyzer.model import Analysis, ToolFormat

# XML-style calls as Qwen3-Coder writes them, reduced to what the analysis needs.
XML_CALLS = """{%- for message in messages %}
{%- if message.role == "user" %}<|im_start|>user
{{ message.content }}<|im_end|>
{% elif message.role == "assistant" %}<|im_start|>assistant
{{ message.content or "" }}
{%- for tool_call in message.tool_calls or [] %}
<tool_call>
<function={{ tool_call.function.name }}>
{%- for name, value in tool_call.function.arguments.items() %}
<parameter={{ name }}>
{{ value if value is string else value | tojson }}
</parameter>
{%- endfor %}
</function>
</tool_call>
{%- endfor %}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"]}}}]


def _build(analysis: Analysis, choice: str, parallel: bool, *, join: bool = True,
           tools: list[dict[str, object]] | None = None,
           prompt: str | None = None) -> tuple[GrammarResult, GrammarBuilder]:
    builder = GrammarBuilder(join=join)
    result = build_tool_grammar(analysis, tools if tools is not None else TOOLS,
                                tool_choice=choice, parallel_tool_calls=parallel,
                                generation_prompt=prompt, builder=builder)
    return result, builder


def test_markers_of_xml_calls_are_whole_and_closers_beside_the_value_are_spelled() -> None:
    analysis = analyze(XML_CALLS)
    result, _ = _build(analysis, "auto", True, tools=WEATHER)
    for marker in ("<tool_call>", "<function=get_weather", "<parameter=city>",
                   "<parameter=days>"):
        assert f'"{marker}"' in result.grammar
    # The raw value's text reads `</parameter>` one character at a time, so it stays
    # spelled, and so do the closers that start like it.
    assert set(literal_runs(result.grammar)) == {"</parameter>", "</function>", "</tool_call>"}
    assert check_gbnf_strict(result.grammar) == []


def test_xml_calls_are_accepted_as_before_and_a_value_may_hold_marker_prefixes() -> None:
    analysis = analyze(XML_CALLS)
    joined, _ = _build(analysis, "auto", True, tools=WEATHER)
    spelled, _ = _build(analysis, "auto", True, join=False, tools=WEATHER)
    call = ("<tool_call>\n<function=get_weather>\n<parameter=city>\n{city}\n</parameter>\n"
            "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>")
    for city in ("Paris", "Pa</parameter", "<parameter=x>", "</par</function>", "<tool_c"):
        text = call.format(city=city)
        assert match_text(joined.grammar, text).accepted
        assert match_text(spelled.grammar, text).accepted
    broken = call.format(city="Paris").replace("<function=", "<functio=")
    assert not match_text(joined.grammar, broken).accepted


@pytest.mark.parametrize("spell", [set(), {"</p>"}])
def test_join_runs_joins_what_spelled_runs_lets_go(spell: set[str]) -> None:
    rules = {"root": '"<" "a" ">" x "<" "/" "p" ">" x "b" "c"?', "x": '[^<]* "-"? "<" x'}
    joined = join_runs(rules, spell, LINE_WIDTH)
    assert joined["x"] == rules["x"]  # a lone literal and a class are left alone
    kept = spelled_runs({"<a>", "</p>"}, spell)
    assert ('"<a>"' in joined["root"]) == ("<a>" not in kept)
    assert ('"</p>"' in joined["root"]) == ("</p>" not in kept)
    assert joined["root"].endswith('"b" "c"?')  # a repeated literal is not part of a run


def test_runs_beside_a_spelled_text_that_holds_their_start_stay_spelled() -> None:
    # `<|channel|>` is spelled (it starts a longer run): a parse reading it one character
    # at a time may be inside it where `|>x` would start.
    kept = spelled_runs({"<|channel|>", "<|channel|>analysis", "analysis", "|>x", "json"}, set())
    assert kept == {"<|channel|>", "<|channel|>analysis", "analysis", "|>x"}


def test_runs_starting_with_whitespace_or_holding_an_excluded_word_stay_spelled() -> None:
    assert spelled_runs({" to=self", "to=get", "a</think>"}, {"</think>"}) == \
        {" to=self", "a</think>", "to=get"}


def _shapes(name: str) -> list[tuple[str, bool]]:
    if not NAMES:
        pytest.skip("corpus templates not found")
    if _analysis(name).tools.format.mode == ToolFormat.NONE:
        pytest.skip("the analysis finds no tool-call format")
    return [("required", False), ("auto", True)]


@pytest.mark.parametrize("name", NAMES)
def test_corpus_grammars_leave_spelled_only_the_runs_that_must_be(name: str) -> None:
    analysis = _analysis(name)
    for choice, parallel in _shapes(name):
        joined, builder = _build(analysis, choice, parallel)
        spelled, _ = _build(analysis, choice, parallel, join=False)
        every_run = set(literal_runs(spelled.grammar))
        left = set(literal_runs(joined.grammar))
        if builder.spell_everything:
            assert left == every_run
            continue
        must = spelled_runs(every_run, builder.spelled)
        too_long = {t for t in every_run if len(literal(t)) > LINE_WIDTH - 4}
        assert left - too_long == must & every_run - too_long
        assert check_gbnf_strict(joined.grammar) == []


def _variants(analysis: Analysis, text: str) -> list[str]:
    """The text, and the text with marker beginnings written where free text may be."""
    markers = {m.strip() for m in (
        analysis.tools.format.per_call_start, analysis.tools.format.section_start,
        analysis.tools.function.name_prefix, analysis.tools.function.close,
        analysis.tools.arguments.name_prefix, analysis.tools.arguments.value_suffix,
        analysis.reasoning.end, analysis.content.end) if len(m.strip()) > 2}
    found = [text, text[:-1]]
    for marker in sorted(markers):
        for spot in ("Paris", "Let me check."):
            if spot in text:
                found.append(text.replace(spot, spot[:2] + marker[:-1] + spot[2:], 1))
    return found


@pytest.mark.parametrize("name", NAMES)
def test_corpus_grammars_accept_the_same_texts_as_with_every_marker_spelled(name: str) -> None:
    analysis = _analysis(name)
    _shapes(name)
    rendered = _rendered(name, 1)
    for choice in ("required", "auto"):
        joined, _ = _build(analysis, choice, False, prompt=rendered.prompt)
        spelled, _ = _build(analysis, choice, False, join=False, prompt=rendered.prompt)
        if joined.grammar == spelled.grammar:
            continue
        base = _from_trigger(joined, rendered.output) if joined.lazy else rendered.output
        assert match_text(joined.grammar, base).accepted
        for text in _variants(analysis, base):
            assert match_text(joined.grammar, text).accepted == \
                match_text(spelled.grammar, text).accepted, text
