"""Tests for analyzer/gbnf/tag_elements.py: nested values written as elements.

The texts follow MiniMax-M3.jinja's to_xml macro: a mapping is one `SEP<k>...SEP</k>`
element per member (SEP its `]<]minimax[>[` token), a list one `SEP<item>...SEP</item>` per
item, booleans through tojson, other scalars as printed.
"""

from __future__ import annotations

from typing import Any

from analyzer.gbnf import check_gbnf_strict, grammar_accepts
from analyzer.gbnf.builder import ROOT, GrammarBuilder
from analyzer.gbnf.json_schema import SchemaConverter
from analyzer.gbnf.tag_elements import TagElements

SEP = "]<]minimax[>["
CLOSING = f"{SEP}</filters>"
FILTERS = {"type": "object", "properties": {
    "country": {"type": "string"},
    "range": {"type": "object", "properties": {"min": {"type": "integer"},
                                               "max": {"type": "integer"}},
              "additionalProperties": False},
    "tags": {"type": "array", "items": {"type": "string"}},
    "open": {"type": "boolean"}}, "additionalProperties": False}


def grammar(schema: Any, separator: str = SEP) -> str:
    """A grammar for one argument's value followed by its closing tag."""
    builder = GrammarBuilder()
    literals = SchemaConverter(builder, python_dicts=True)
    elements = TagElements(builder, separator, literals, literals.space())
    closing = f"{separator}</filters>"
    value = elements.value(schema, "filters", closing)
    builder.define(ROOT, f"{value} " + " ".join(f'"{c}"' for c in closing))
    text = builder.render()
    assert check_gbnf_strict(text) == []
    return text


def el(name: str, inner: str) -> str:
    return f"{SEP}<{name}>{inner}{SEP}</{name}>"


def test_an_object_as_elements_is_accepted() -> None:
    text = el("country", "FR") + el("range", el("min", "1") + el("max", "5")) + \
        el("tags", el("item", "art") + el("item", "two words")) + el("open", "false") + CLOSING
    assert grammar_accepts(grammar(FILTERS), text)


def test_the_same_object_as_one_literal_is_accepted_too() -> None:
    assert grammar_accepts(grammar(FILTERS), "{'country': 'FR', 'open': False}" + CLOSING)


def test_an_element_closed_by_another_name_is_rejected() -> None:
    assert not grammar_accepts(grammar(FILTERS), f"{SEP}<country>FR{SEP}</open>" + CLOSING)


def test_an_undeclared_member_is_rejected_when_the_schema_forbids_it() -> None:
    assert not grammar_accepts(grammar(FILTERS), el("planet", "Mars") + CLOSING)


def test_a_scalar_of_the_wrong_type_is_rejected() -> None:
    assert not grammar_accepts(grammar(FILTERS), el("range", el("min", "one")) + CLOSING)


def test_string_leaves_may_hold_markup_up_to_their_own_closing_tag() -> None:
    assert grammar_accepts(grammar(FILTERS), el("country", "<b>F</b>R") + CLOSING)


def test_any_schema_takes_elements_of_any_name_nested_or_text() -> None:
    text = el("theme", "dark") + el("sizes", el("item", "1") + el("item", "2")) + CLOSING
    assert grammar_accepts(grammar(True), text)
    assert grammar_accepts(grammar(True), "plain words" + CLOSING)


def test_without_a_separator_elements_are_plain_tags() -> None:
    text = "<country>FR</country><open>true</open></filters>"
    assert grammar_accepts(grammar(FILTERS, separator=""), text)
