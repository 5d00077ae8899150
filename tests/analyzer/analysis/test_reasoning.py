"""R1-R3 and the generation prompts, on templates written for each reasoning mode."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from analyzer.analysis.pipeline import analyze
from analyzer.analysis.reasoning import closing_form
from analyzer.model import Analysis, Comparison, ReasoningMode

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "templates"


@cache
def analysis_of(name: str) -> Analysis:
    return analyze((FORMATS / f"{name}.jinja").read_text())


def comparison(analysis: Analysis, cid: str) -> Comparison:
    return next(c for c in analysis.comparisons if c.id == cid)


def prompts(analysis: Analysis) -> dict[bool | None, tuple[str, str]]:
    return {p.enable_thinking: (p.text, p.label) for p in analysis.generation_prompts}


def test_no_reasoning_markers_in_a_plain_template() -> None:
    assert analysis_of("plain").reasoning.mode == ReasoningMode.NONE


def test_r1_reads_tag_markers_around_the_reasoning() -> None:
    reasoning = analysis_of("think_tag_based").reasoning
    assert (reasoning.mode, reasoning.start, reasoning.end) == (
        ReasoningMode.TAG_BASED, "<think>", "</think>")
    assert reasoning.field == "reasoning_content"


def test_r1_markers_carry_provenance() -> None:
    analysis = analysis_of("think_tag_based")
    start = next(m for m in analysis.markers if m.role == "reasoning.start")
    assert start.comparison == "R1" and start.span_b is not None
    rendered = comparison(analysis, "R1").variant_b
    assert rendered is not None
    assert rendered.rendered[start.span_b.start : start.span_b.end] == "<think>"


def test_r1_without_a_start_marker_is_a_delimiter() -> None:
    reasoning = analysis_of("think_delimiter").reasoning
    assert (reasoning.mode, reasoning.start, reasoning.end) == (
        ReasoningMode.DELIMITER, "", "[BEGIN FINAL RESPONSE]")


def test_r2_forced_open_when_thinking_on_opens_the_block_in_the_prompt() -> None:
    analysis = analysis_of("think_forced_open")
    assert analysis.reasoning.mode == ReasoningMode.FORCED_OPEN
    assert prompts(analysis)[True] == ("<|assistant|><think>\n", "forced-open")
    assert prompts(analysis)[False] == ("<|assistant|>", "model's choice")


def test_r2_forced_closed_when_thinking_off_closes_an_empty_block() -> None:
    analysis = analysis_of("think_forced_closed")
    assert analysis.reasoning.mode == ReasoningMode.FORCED_CLOSED
    assert prompts(analysis)[False] == ("<|assistant|><think>\n</think>\n\n", "closed")
    assert prompts(analysis)[None][1] == "forced-open"


def test_r2_finds_markers_from_the_toggle_alone() -> None:
    source = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
              "{% if add_generation_prompt %}<|assistant|>"
              "{% if enable_thinking %}<think>{% else %}</think>{% endif %}{% endif %}")
    reasoning = analyze(source).reasoning
    assert (reasoning.mode, reasoning.start, reasoning.end) == (
        ReasoningMode.FORCED_CLOSED, "<think>", "</think>")


def test_a_prompt_ending_in_an_opening_tag_the_template_closes_is_forced_open() -> None:
    source = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content.split('</think>')[-1] }}"
              "{% endfor %}{% if add_generation_prompt %}<|assistant|><think>\n{% endif %}")
    analysis = analyze(source)
    assert (analysis.reasoning.mode, analysis.reasoning.end) == (ReasoningMode.FORCED_OPEN,
                                                                 "</think>")
    derived = next(m for m in analysis.markers if m.role == "reasoning.end")
    assert derived.comparison == "R2:derived-closer" and derived.span_a is None


def test_r3_finds_reasoning_shown_only_next_to_tool_calls() -> None:
    reasoning = analysis_of("think_tools_only").reasoning
    assert (reasoning.mode, reasoning.start, reasoning.end) == (
        ReasoningMode.TOOLS_ONLY, "<|THINK|>", "<|/THINK|>")


def test_r3_is_skipped_without_tool_calls() -> None:
    r3 = comparison(analysis_of("think_tag_based"), "R3")
    assert r3.status == "skipped" and "tool calls" in r3.note


def test_a_refused_reasoning_variant_is_unsupported_and_analysis_continues() -> None:
    analysis = analysis_of("refuses_reasoning")
    r1 = comparison(analysis, "R1")
    assert r1.status == "unsupported"
    assert r1.note == "reasoning_content is not supported by this template"
    assert analysis.reasoning.mode == ReasoningMode.NONE
    assert comparison(analysis, "C1").status == "ok"


def test_reasoning_given_as_thinking_chunks_is_found() -> None:
    source = ("{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
              "{% for c in m.content %}{% if c.type == 'thinking' %}[THINK]{{ c.thinking }}[/THINK]"
              "{% else %}{{ c.text }}{% endif %}{% endfor %}{% endif %}{% endfor %}")
    reasoning = analyze(source).reasoning
    assert (reasoning.start, reasoning.end, reasoning.field) == (
        "[THINK]", "[/THINK]", "content[type=thinking]")


def test_closing_form_of_opening_tags() -> None:
    assert closing_form("<think>") == "</think>"
    assert closing_form("<seed:think>") == "</seed:think>"
    assert closing_form("[THINK]") == "[/THINK]"
    assert closing_form("<|START_THINKING|>") == ""


def test_a_turn_header_written_after_the_reasoning_end_is_recorded() -> None:
    analysis = analyze((FIXTURES / "reasoning_own_turn.jinja").read_text())
    reasoning = analysis.reasoning
    assert (reasoning.start, reasoning.end) == ("<|think|>", "<|end|>")
    assert reasoning.after_end == "<|begin|>assistant"
    marker = next(m for m in analysis.markers if m.role == "reasoning.after_end")
    r1 = comparison(analysis, "R1")
    assert r1.variant_b is not None and marker.span_b is not None
    assert r1.variant_b.rendered[marker.span_b.start : marker.span_b.end] == "<|begin|>assistant"


def test_no_header_after_the_reasoning_end_when_the_answer_follows_directly() -> None:
    assert analysis_of("think_tag_based").reasoning.after_end == ""
