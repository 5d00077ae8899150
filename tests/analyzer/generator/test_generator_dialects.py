"""Argument value dialects: marker-quoted JSON (Gemma 4) and nested tags (MiniMax-M3)."""

from __future__ import annotations

import json

import pytest

from analyzer.generator.dialect import QuotedDialect
from analyzer.generator.tag_dialect import TagDialect

GEMMA = QuotedDialect('<|"|>')
SEP = "]<]minimax[>["


def test_marker_quoted_values_become_json() -> None:
    text = '{name:<|"|>a, b<|"|>,tags:[<|"|>x<|"|>,<|"|>y<|"|>],n:3,ok:true,none:null}'
    assert json.loads(GEMMA.to_json(text)) == {"name": "a, b", "tags": ["x", "y"], "n": 3,
                                               "ok": True, "none": None}


def test_python_spelled_literals_are_json_literals() -> None:
    assert json.loads(GEMMA.to_json("[None,True,False]")) == [None, True, False]


def test_a_malformed_value_is_refused() -> None:
    with pytest.raises(ValueError, match="expected `,` or `]`"):
        GEMMA.to_json("[1 2]")


def tags(schema: dict[str, object]) -> TagDialect:
    return TagDialect(SEP, json.dumps(schema, sort_keys=True))


def test_nested_tags_become_an_object_typed_by_the_schema() -> None:
    schema = {"type": "object", "properties": {"real": {"type": "number"},
                                               "name": {"type": "string"}}}
    text = f"{SEP}<real>1.5{SEP}</real>{SEP}<name>12{SEP}</name>"
    assert json.loads(tags(schema).to_json(text)) == {"real": 1.5, "name": "12"}


def test_item_tags_become_an_array() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    text = f"{SEP}<item>1{SEP}</item>{SEP}<item>2{SEP}</item>"
    assert json.loads(tags(schema).to_json(text)) == [1, 2]


def test_a_schema_that_prefers_a_string_keeps_the_markup_as_text() -> None:
    schema = {"oneOf": [{"type": "string"}, {"type": "object"}]}
    text = f"{SEP}<text>hi{SEP}</text>"
    assert json.loads(tags(schema).to_json(text)) == text
