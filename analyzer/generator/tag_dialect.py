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
from typing import Any

from analyzer.parsing.mapper import JSON_TEXT, type_tagged_value
from analyzer.peg.json_values import declared_types

ITEM = "item"


@dataclass(frozen=True)
class TagDialect:
    """Nested values as `SEP<KEY>VALUE SEP</KEY>` elements, SEP the template's token."""

    separator: str
    schema_json: str  # the argument's schema, canonical JSON (keeps the dialect hashable)

    @cached_property
    def schema(self) -> Mapping[str, Any]:
        schema: Mapping[str, Any] = json.loads(self.schema_json)
        return schema

    def to_json(self, text: str) -> str:
        """Return the JSON text of a complete value."""
        return JSON_TEXT.encode(self.convert(text, self.schema))

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
        """Read `<name>inner SEP</name>` at pos; return name, inner text and the end."""
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

    @cached_property
    def gaps(self) -> re.Pattern[str]:
        """Separators and whitespace (`\\s` is what str.isspace() accepts), in any order."""
        return re.compile(rf"(?:\s|{re.escape(self.separator)})*" if self.separator else r"\s*")

    def skip(self, text: str, pos: int) -> int:
        """Skip separators and whitespace."""
        return self.gaps.match(text, pos).end()  # type: ignore[union-attr]  # * always matches
