"""Tests for analyzer/gbnf/check.py: llguidance compiles grammars and matches text."""

from __future__ import annotations

import pytest

from analyzer.gbnf.check import (
    compile_gbnf,
    grammar_accepts,
    match_lark,
    match_text,
    rejection_offset,
)
from analyzer.gbnf.errors import GrammarCompileError

GREETING = 'root ::= "hello" " "+ name\nname ::= [a-z]+\n'


def test_accepts_a_full_match() -> None:
    assert grammar_accepts(GREETING, "hello  world")
    assert rejection_offset(GREETING, "hello world") is None


def test_rejects_text_that_leaves_the_grammar_and_says_where() -> None:
    found = match_text(GREETING, "hello World")
    assert not found.accepted
    assert found.offset == 6
    assert found.describe() == (
        "rejected at offset 6: found 'World'\nhello World\n      ^")


def test_text_that_stops_early_is_not_accepted() -> None:
    found = match_text(GREETING, "hello ")
    assert (found.accepted, found.offset) == (False, 6)
    assert "text ended too early" in found.describe()


def test_offsets_count_characters_not_bytes() -> None:
    grammar = 'root ::= "é" "ü" "x"\n'
    assert rejection_offset(grammar, "éüy") == 2


def test_a_multiline_rejection_shows_the_failing_line() -> None:
    found = match_text(GREETING.replace('" "+', '[ \\n]+'), "hello\nWorld")
    assert found.describe().splitlines()[1:] == ["World", "^"]


def test_broken_grammar_raises_with_llguidance_reason() -> None:
    with pytest.raises(GrammarCompileError, match="llguidance could not compile the grammar"):
        compile_gbnf('root ::= "a" [\\-]\n')


def test_undefined_rule_is_a_compile_error() -> None:
    with pytest.raises(GrammarCompileError, match="missing"):
        compile_gbnf("root ::= missing\n")


def test_match_lark_runs_a_lark_grammar_with_json_schemas() -> None:
    grammar = 'start: "<c>" %json{"type": "object", "properties": {"a": {"type": "integer"}}, ' \
              '"required": ["a"]} "</c>"\n'
    assert match_lark(grammar, '<c>{"a": 1}</c>').accepted
    refused = match_lark(grammar, '<c>{"a": "x"}</c>')
    assert not refused.accepted and refused.offset < len('<c>{"a": "x"}</c>')
