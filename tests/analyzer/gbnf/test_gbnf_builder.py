"""Tests for analyzer/gbnf/builder.py: names, literals and classes both engines read alike."""

from __future__ import annotations

import pytest

from analyzer.gbnf.builder import (
    LINE_WIDTH,
    GrammarBuilder,
    alt,
    char_class,
    chars,
    is_atomic,
    literal,
    opt,
    repeat,
    rule_name,
    seq,
)
from analyzer.gbnf.check import grammar_accepts, match_text
from analyzer.gbnf.lint import check_gbnf_strict


def _grammar(expr: str) -> str:
    return f"root ::= {expr}\n"


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        ("get_weather", "get-weather"),
        ("tool.get weather!", "tool-get-weather"),
        ("__x__", "x"),
        ("日本", "rule"),
        ("a--b", "a-b"),
        ("getWeather", "get-weather"),
        ("HTTPGet", "httpget"),
    ],
)
def test_rule_name_keeps_only_letters_digits_and_dashes(hint: str, expected: str) -> None:
    assert rule_name(hint) == expected


@pytest.mark.parametrize(
    "text",
    [
        'say "hi"\\now',
        "line one\nline two\r\n\ttabbed",
        "<｜tool▁calls▁begin｜>",
        "[TOOL_CALLS]",
        "\x00\x01\x1f\x7f",
        "😀 emoji and é",
        "a\u2028b",
    ],
)
def test_literal_matches_exactly_its_text_in_llguidance(text: str) -> None:
    grammar = _grammar(literal(text))
    assert check_gbnf_strict(grammar) == []
    assert grammar_accepts(grammar, text)
    assert not grammar_accepts(grammar, text + "x")
    assert not grammar_accepts(grammar, text[:-1])


def test_literal_writes_control_characters_as_hex_escapes() -> None:
    assert literal("\x01\n") == '"\\x01\\n"'


@pytest.mark.parametrize("chars", ["-", "^", "]", "[", "\\", '"', "^-", "a^-]", "\n\t", "｜▁"])
def test_char_class_matches_each_listed_character_and_nothing_else(chars: str) -> None:
    grammar = _grammar(char_class(chars))
    assert check_gbnf_strict(grammar) == []
    for char in chars:
        assert grammar_accepts(grammar, char), char
    assert not grammar_accepts(grammar, "z")


@pytest.mark.parametrize("chars", ["-", "^", "]", "<", "^-", "｜"])
def test_negated_char_class_rejects_listed_characters(chars: str) -> None:
    grammar = _grammar(char_class(chars, negate=True))
    assert check_gbnf_strict(grammar) == []
    for char in chars:
        assert not grammar_accepts(grammar, char), char
    assert grammar_accepts(grammar, "z")
    assert grammar_accepts(grammar, "\n")


def test_char_class_refuses_an_empty_set() -> None:
    with pytest.raises(ValueError, match="at least one character"):
        char_class("")


@pytest.mark.parametrize(
    ("expr", "atomic"),
    [
        ("name-1", True),
        ('"a b"', True),
        ('"a\\"b"', True),
        ("[a-z]", True),
        ('("a" | "b")', True),
        ('"a" "b"', False),
        ('("a") ("b")', False),
        ("x?", False),
        ('"(" x', False),
    ],
)
def test_is_atomic_tells_single_primaries_apart(expr: str, atomic: bool) -> None:
    assert is_atomic(expr) is atomic


def test_combinators_parenthesize_where_precedence_needs_it() -> None:
    choice = alt(literal("a"), literal("b"))
    assert seq(choice, literal("c")) == '("a" | "b") "c"'
    assert opt(seq(literal("a"), literal("b"))) == '("a" "b")?'
    assert repeat(literal("a"), 2, 4) == '"a"{2,4}'
    assert repeat(literal("a"), 0, 0) == ""
    assert alt(literal("a"), literal("a")) == '"a"'


def test_repeat_counts_are_respected_by_llguidance() -> None:
    grammar = _grammar(repeat(literal("ab"), 2, 3))
    assert [grammar_accepts(grammar, "ab" * n) for n in range(5)] == [
        False, False, True, True, False]


def test_builder_shares_identical_bodies_and_keeps_names_unique() -> None:
    builder = GrammarBuilder()
    first = builder.add("value", '"x"')
    assert builder.add("other", '"x"') == first
    second = builder.add("value", '"y"')
    assert (first, second) == ("value", "value-2")


def test_names_differing_only_in_case_style_stay_distinct_for_llguidance() -> None:
    builder = GrammarBuilder()
    names = [builder.add(hint, f'"{i}"') for i, hint in enumerate(["getWeather", "get_weather"])]
    builder.define("root", alt(*names))
    grammar = builder.render()
    assert names == ["get-weather", "get-weather-2"]
    assert grammar_accepts(grammar, "1")


def test_builder_never_hands_out_root_and_prints_root_first() -> None:
    builder = GrammarBuilder()
    name = builder.add("root", '"x"')
    assert name != "root"
    builder.define("root", name)
    assert builder.render().splitlines()[0] == f"root ::= {name}"


def test_reserved_names_allow_recursive_rules() -> None:
    builder = GrammarBuilder()
    nested = builder.reserve("nested")
    builder.define(nested, alt(literal("x"), seq(literal("("), nested, literal(")"))))
    builder.define("root", nested)
    grammar = builder.render()
    assert check_gbnf_strict(grammar) == []
    assert grammar_accepts(grammar, "((x))")
    assert match_text(grammar, "((x)").offset == 4


def test_a_long_rule_wraps_within_the_width_and_reads_the_same_in_llguidance() -> None:
    text = 'a "quoted" [class] \\ back  and spaces ' * 6
    builder = GrammarBuilder()
    builder.define("root", alt(seq(chars(text), literal("tail with spaces")), literal("x y")))
    grammar = builder.render()
    lines = grammar.splitlines()
    assert len(lines) > 3 and lines[0] == "root ::= ("
    assert max(len(line) for line in lines) <= LINE_WIDTH
    assert check_gbnf_strict(grammar) == []
    assert grammar_accepts(grammar, text + "tail with spaces")
    assert grammar_accepts(grammar, "x y")
    assert not grammar_accepts(grammar, text + "tail  with spaces")
