"""Tests for analyzer/gbnf/dialect.py: values in Gemma 4's `<|"|>`-quoted dialect.

The accepted texts follow google-gemma-4-31B-it.jinja's format_argument macro: strings
between `<|"|>`, mapping keys bare inside tool calls (escape_keys=False) and members sorted
(dictsort), booleans `true`/`false`, other scalars as Python prints them (`None`, `0.25`).
"""

from __future__ import annotations

from typing import Any

import pytest

from analyzer.gbnf import check_gbnf_strict, grammar_accepts
from analyzer.gbnf.builder import ROOT, GrammarBuilder
from analyzer.gbnf.dialect import QuotedDialectConverter

QUOTE = '<|"|>'
FILTERS = {"type": "object", "properties": {
    "country": {"type": "string"},
    "range": {"type": "object", "properties": {"min": {"type": "integer"},
                                               "max": {"type": "integer"}},
              "additionalProperties": False},
    "open": {"type": "boolean"}}, "additionalProperties": False}


def grammar(schema: Any) -> str:
    builder = GrammarBuilder()
    builder.define(ROOT, QuotedDialectConverter(builder, QUOTE).value(schema, "value"))
    text = builder.render()
    assert check_gbnf_strict(text) == []
    return text


def q(text: str) -> str:
    return f"{QUOTE}{text}{QUOTE}"


def test_nested_object_with_bare_sorted_keys_is_accepted() -> None:
    text = "{country:" + q("FR") + ",open:false,range:{max:5,min:1}}"
    assert grammar_accepts(grammar(FILTERS), text)


def test_members_in_schema_order_and_quoted_keys_are_accepted_too() -> None:
    text = "{" + q("country") + ":" + q("FR") + ",range:{min:1,max:5},open:true}"
    assert grammar_accepts(grammar(FILTERS), text)


@pytest.mark.parametrize(
    "text",
    ['{country:"FR"}', '{"country":' + q("FR") + "}", "{planet:" + q("Mars") + "}",
     "{country:" + q("FR") + ",country:" + q("DE") + "}", "{range:{min:one}}"],
    ids=["json-string", "json-key", "undeclared-key", "repeated-key", "word-for-number"],
)
def test_values_outside_the_dialect_or_schema_are_rejected(text: str) -> None:
    assert not grammar_accepts(grammar(FILTERS), text)


def test_strings_may_hold_markup_but_not_the_quote_marker() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    assert grammar_accepts(grammar(schema), "[" + q('<b>x</b> "y"') + "," + q("çà") + "]")
    assert not grammar_accepts(grammar(schema), "[" + q("a" + QUOTE + "b") + "]")


def test_python_and_json_literals_are_both_accepted() -> None:
    schema = {"anyOf": [{"type": "integer"}, {"type": "null"}, {"type": "boolean"}]}
    for text in ("None", "null", "3", "true", "False"):
        assert grammar_accepts(grammar(schema), text), text


def test_undeclared_members_have_bare_or_quoted_keys() -> None:
    text = "{theme:" + q("dark") + "," + q("two words") + ":3}"
    assert grammar_accepts(grammar({"type": "object"}), text)
    assert grammar_accepts(grammar(True), text)


def test_constants_are_quoted_with_the_marker() -> None:
    assert grammar_accepts(grammar({"enum": ["celsius", 1]}), q("celsius"))
    assert not grammar_accepts(grammar({"enum": ["celsius", 1]}), '"celsius"')
