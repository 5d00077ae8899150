"""Tests for analyzer/gbnf/until.py: free text that never contains given markers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.gbnf.builder import GrammarBuilder
from analyzer.gbnf.check import grammar_accepts
from analyzer.gbnf.lint import check_gbnf_strict
from analyzer.gbnf.until import text_excluding


def _grammar(markers: list[str]) -> str:
    builder = GrammarBuilder()
    builder.define("root", text_excluding(builder, markers, "text"))
    return builder.render()


TOOL_CALL = _grammar(["<tool_call>"])


@pytest.mark.parametrize(
    "text",
    ["", "plain words", "a < b and c > d", "<tool_", "<tool_cal", "<<tool_call", "</tool_call",
     "multi\nline\ntext"],
)
def test_text_without_the_marker_is_accepted(text: str) -> None:
    assert grammar_accepts(TOOL_CALL, text)


@pytest.mark.parametrize(
    "text", ["<tool_call>", "x<tool_call>", "<<tool_call>", "<tool_<tool_call>", "a<tool_call>b"]
)
def test_text_containing_the_marker_is_rejected(text: str) -> None:
    assert not grammar_accepts(TOOL_CALL, text)


def test_self_overlapping_marker_is_found_after_a_false_start() -> None:
    grammar = _grammar(["aab"])
    assert grammar_accepts(grammar, "aaaa")
    assert not grammar_accepts(grammar, "aaab")
    assert not grammar_accepts(grammar, "abaab")


def test_several_markers_are_all_excluded() -> None:
    grammar = _grammar(["</think>", "<tool_call>"])
    assert grammar_accepts(grammar, "</thin <tool_cal")
    assert not grammar_accepts(grammar, "a</think>")
    assert not grammar_accepts(grammar, "a<tool_call>")


def test_unicode_markers_work_character_by_character() -> None:
    grammar = _grammar(["<｜tool▁calls▁begin｜>"])
    assert grammar_accepts(grammar, "<｜tool▁calls｜> ｜▁")
    assert not grammar_accepts(grammar, "x<｜tool▁calls▁begin｜>")


def test_a_single_character_marker_gives_one_rule() -> None:
    grammar = _grammar(["{"])
    assert grammar.count("::=") == 2
    assert not grammar_accepts(grammar, "a{")


def test_no_markers_means_any_text() -> None:
    assert grammar_accepts(_grammar([]), "anything <at> all\n")


def test_the_same_markers_reuse_the_same_rules() -> None:
    builder = GrammarBuilder()
    first = text_excluding(builder, ["</p>"], "value")
    assert text_excluding(builder, ["</p>", ""], "other") == first


def test_generated_rules_pass_llama_cpp_strictness() -> None:
    assert check_gbnf_strict(_grammar(["<tool_call>", "</think>", "aab", "{"])) == []


@settings(max_examples=60, deadline=None)
@given(
    marker=st.text(alphabet="ab<>", min_size=1, max_size=4),
    text=st.text(alphabet="ab<>x", max_size=12),
)
def test_acceptance_equals_not_containing_the_marker(marker: str, text: str) -> None:
    assert grammar_accepts(_grammar([marker]), text) == (marker not in text)
