"""Argument value dialects: marker-quoted JSON (Gemma 4) and nested tags (MiniMax-M3)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from analyzer.generator.dialect import QuotedDialect
from analyzer.generator.tag_dialect import TagDialect
from analyzer.parsing.mapper import JSON_TEXT, type_tagged_value
from analyzer.peg.json_values import declared_types

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


class LoopedTagDialect(TagDialect):
    """The dialect as it read values before its shortcuts: whitespace skipped a character at a
    time, elements found by str.find one at a time (also in a value whose schema prefers a
    string), the value built and then encoded."""

    def to_json(self, text: str) -> str:
        return JSON_TEXT.encode(self.convert(text, self.schema))

    def convert(self, text: str, schema: Mapping[str, Any]) -> Any:
        types = declared_types(schema)
        elements = self.elements(text)
        if elements is None or types[:1] == ["string"]:
            return json.loads(type_tagged_value(text, tuple(types)))
        if elements and all(name == "item" for name, _ in elements) and (
                "array" in types or not types):
            items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {}
            return [self.convert(inner, items or {}) for _, inner in elements]
        properties = schema.get("properties") or {}
        if not properties:
            for option in schema.get("anyOf") or schema.get("oneOf") or []:
                properties = option.get("properties") or properties
        return {name: self.convert(inner, properties.get(name) or {}) for name, inner in elements}

    def skip(self, text: str, pos: int) -> int:
        while True:
            start = pos
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if self.separator and text.startswith(self.separator, pos):
                pos += len(self.separator)
            if pos == start:
                return pos

    def elements(self, text: str) -> list[tuple[str, str]] | None:
        found: list[tuple[str, str]] = []
        pos = self.skip(text, 0)
        if pos >= len(text):
            return None
        while pos < len(text):
            element = self.element(text, pos)
            if element is None:
                return None
            name, inner, pos = element
            found.append((name, inner))
            pos = self.skip(text, pos)
        return found

    def element(self, text: str, pos: int) -> tuple[str, str, int] | None:
        if not text.startswith("<", pos) or text.startswith("</", pos):
            return None
        close = text.find(">", pos)
        if close < 0:
            return None
        name = text[pos + 1 : close]
        ending = f"{self.separator}</{name}>"
        end = text.find(ending, close + 1)
        if not name or end < 0:
            return None
        return name, text[close + 1 : end], end + len(ending)


NESTED_SCHEMA = {"type": "object", "properties": {
    "tags": {"type": "array", "items": {"type": "string"}},
    "who": {"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"}}}},
    "note": {"type": ["string", "null"]}, "ok": {"type": "boolean"}, "n": {"type": "number"}}}
NESTED = (f"{SEP}<tags>{SEP}<item> a b {SEP}</item>\n{SEP}<item>{SEP}<x>1{SEP}</x>{SEP}</item>"
          f"{SEP}</tags> {SEP}<who>{SEP}<item>{SEP}<name>Ann{SEP}</name>{SEP}<age>41{SEP}</age>"
          f"{SEP}</item>{SEP}</who>\u2003{SEP}<note>None{SEP}</note>{SEP}<ok>True{SEP}</ok>"
          f"\x1c{SEP}<n>-0.5e3{SEP}</n>")


def mutations(text: str) -> list[str]:
    """The text cut, with a character dropped or added, here and there."""
    cuts = [text[:size] for size in range(0, len(text) + 1, 2)]
    dropped = [text[:at] + text[at + 1 :] for at in range(0, len(text), 2)]
    added = [text[:at] + extra + text[at:] for at in range(0, len(text), 5)
             for extra in ("<", "\xa0", "x")]
    return cuts + dropped + added


# Numbers JSON writes otherwise than the model did, and a name given twice (a dict keeps its
# first place and its last value).
RESPELLED = (f"{SEP}<n>-0{SEP}</n>{SEP}<age>007{SEP}</age>{SEP}<ok>1E5{SEP}</ok>{SEP}<n>"
             f"{'9' * 30}{SEP}</n>{SEP}<who>{SEP}<item>-12{SEP}</item>{SEP}<item>1.50{SEP}</item>"
             f"{SEP}</who>")


@pytest.mark.parametrize("separator", [SEP, "", "<s>"])
@pytest.mark.parametrize("schema", [NESTED_SCHEMA, {},
                                    {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                                    {"type": "object", "properties": {
                                        "n": {"type": "integer"}, "age": {"type": "integer"},
                                        "ok": {"type": "number"}, "who": {"type": "array",
                                                                         "items": {}}}}])
@pytest.mark.parametrize("value", [NESTED, RESPELLED])
def test_tag_values_read_as_the_looped_reading_did(separator: str, schema: dict[str, object],
                                                   value: str) -> None:
    text = value.replace(SEP, separator)
    canonical = json.dumps(schema, sort_keys=True)
    fast, looped = TagDialect(separator, canonical), LoopedTagDialect(separator, canonical)
    for mutated in mutations(text):
        assert fast.to_json(mutated) == looped.to_json(mutated), mutated


def test_gaps_are_taken_whole_as_the_looped_reading_takes_them() -> None:
    # A separator that looks like an element: the gaps before an element are not given back.
    text = "<s>x<s></s>"
    fast, looped = TagDialect("<s>", "{}"), LoopedTagDialect("<s>", "{}")
    assert fast.to_json(text) == looped.to_json(text) == json.dumps(text)
