"""Argument values written as nested tags (MiniMax-M3's `<city>Tokyo</city>` style).

When a template closes a value with a tag repeating the argument's name, it writes nested
values the same way: an object as one tagged element per member, an array as `<item>`
elements (the template's own element name for list items). The whole value is captured as
text; the mapper asks this dialect, which knows the argument's schema, for its JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from json.encoder import encode_basestring
from typing import Any

from analyzer.parsing.mapper import JSON_TEXT, type_tagged_value
from analyzer.peg.json_values import declared_types

ITEM = "item"
LITERALS = frozenset({"true", "false", "null"})


class Shape:
    """What converting a value needs of its (sub)schema, worked out once per grammar: its
    types, and the shapes of its items and members (made when first needed)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.types = tuple(declared_types(schema))
        self.string_first = self.types[:1] == ("string",)
        self.may_be_array = "array" in self.types or not self.types
        self.members: dict[str, Shape] = {}

    @cached_property
    def items(self) -> Shape:
        items = self.schema.get("items") if isinstance(self.schema.get("items"), Mapping) else {}
        return Shape(items or {})

    @cached_property
    def properties(self) -> Mapping[str, Any]:
        properties = self.schema.get("properties") or {}
        if not properties:
            for option in self.schema.get("anyOf") or self.schema.get("oneOf") or []:
                properties = option.get("properties") or properties
        return properties

    def member(self, name: str) -> Shape:
        """The shape of the member called name (any value when the schema does not say)."""
        shape = self.members.get(name)
        if shape is None:
            shape = self.members[name] = Shape(self.properties.get(name) or {})
        return shape


def scalar_json(typed: str) -> str:
    """Return typed JSON text as JSON_TEXT.encode(json.loads(typed)) writes it: strings (as
    encode_basestring writes them), literals and plain integers are already written so; any
    other text takes the round trip."""
    if typed[:1] == '"' or typed in LITERALS:
        return typed
    digits = typed[1:] if typed[:1] == "-" else typed
    if digits.isascii() and digits.isdigit() and len(digits) < 19 and (
            digits[0] != "0" or typed == "0"):
        return typed
    return JSON_TEXT.encode(json.loads(typed))


@dataclass(frozen=True)
class TagDialect:
    """Nested values as `SEP<KEY>VALUE SEP</KEY>` elements, SEP the template's token."""

    separator: str
    schema_json: str  # the argument's schema, canonical JSON (keeps the dialect hashable)

    @cached_property
    def schema(self) -> Mapping[str, Any]:
        schema: Mapping[str, Any] = json.loads(self.schema_json)
        return schema

    @cached_property
    def shape(self) -> Shape:
        return Shape(self.schema)

    def to_json(self, text: str) -> str:
        """Return the JSON text of a complete value (as JSON_TEXT.encode(convert(...)) writes
        it, written in the one pass over its elements)."""
        return self.written(text, self.shape)

    def written(self, text: str, shape: Shape) -> str:
        """Write a value's JSON: convert()'s reading, without building the value to encode it."""
        if shape.string_first:
            return encode_basestring(text)
        elements = self.elements(text) if "<" in text else None
        if elements is None:
            return scalar_json(type_tagged_value(text, shape.types))
        if shape.may_be_array and all(name == ITEM for name, _ in elements):
            items = shape.items
            return "[" + ", ".join(self.written(inner, items) for _, inner in elements) + "]"
        if len({name for name, _ in elements}) < len(elements):
            # A name given twice: a dict keeps its first place and last value; let it say so.
            return JSON_TEXT.encode(self.convert(text, shape.schema))
        members = (encode_basestring(name) + ": " + self.written(inner, shape.member(name))
                   for name, inner in elements)
        return "{" + ", ".join(members) + "}"

    def convert(self, text: str, schema: Mapping[str, Any]) -> Any:
        """Convert a value: text typed by its schema, or nested elements to an object/array."""
        types = declared_types(schema)
        if types[:1] == ["string"]:
            return text  # a string first: the text as it is (no need to look for elements)
        # Every element begins with `<`: text without one is a scalar (elements() says None).
        elements = self.elements(text) if "<" in text else None
        if elements is None:
            return json.loads(type_tagged_value(text, tuple(types)))
        if elements and all(name == ITEM for name, _ in elements) and (
                "array" in types or not types):
            items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {}
            return [self.convert(inner, items or {}) for _, inner in elements]
        properties = schema.get("properties") or {}
        if not properties:
            for option in schema.get("anyOf") or schema.get("oneOf") or []:
                properties = option.get("properties") or properties
        return {name: self.convert(inner, properties.get(name) or {}) for name, inner in elements}

    def elements(self, text: str) -> list[tuple[str, str]] | None:
        """Split text into (name, inner text) elements; None if it is not made of elements."""
        found = []
        pos, match = 0, self.element_at.match
        while (element := match(text, pos)) is not None:
            found.append((element[1], element[2]))
            pos = element.end()
        if not found or self.skip(text, pos) < len(text):
            return None
        return found

    @cached_property
    def element_at(self) -> re.Pattern[str]:
        """Gaps, then `<name>inner SEP</name>`: name up to the first `>` (not a closing tag),
        inner up to the first `SEP</name>`. The gaps are possessive, as skip() takes them."""
        separator = re.escape(self.separator)
        gaps = rf"(?:\s|{separator})*+" if self.separator else r"\s*+"
        return re.compile(rf"{gaps}<(?!/)([^>]+)>(.*?){separator}</\1>", re.DOTALL)

    @cached_property
    def gaps(self) -> re.Pattern[str]:
        """Separators and whitespace (`\\s` is what str.isspace() accepts), in any order."""
        return re.compile(rf"(?:\s|{re.escape(self.separator)})*" if self.separator else r"\s*")

    def skip(self, text: str, pos: int) -> int:
        """Skip separators and whitespace."""
        return self.gaps.match(text, pos).end()  # type: ignore[union-attr]  # * always matches
