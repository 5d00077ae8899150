"""Values written as nested elements, when a template closes a value with its own name.

MiniMax-M3 writes `<filters>SEP<country>FR SEP</country>SEP<range>...SEP</range>SEP</filters>`
(SEP its `]<]minimax[>[` token): an object is one element per member, an array one `<item>`
element per item, a scalar its plain text. Members may come in any order and are not
counted: GBNF cannot tie a closing tag to an undeclared opening name, so undeclared members
take any name.
"""

from __future__ import annotations

from typing import Any

from analyzer.gbnf.builder import GrammarBuilder, alt, chars, seq, star
from analyzer.gbnf.json_schema import SchemaConverter
from analyzer.gbnf.schema_types import split_by_type, union
from analyzer.gbnf.until import text_excluding

ITEM = "item"
NAME_CHARS = "[A-Za-z0-9_.:-]+"


class TagElements:
    """Add rules for values written as `SEP<KEY>VALUE SEP</KEY>` elements."""

    def __init__(self, builder: GrammarBuilder, separator: str, literals: SchemaConverter,
                 ws: str) -> None:
        self.builder = builder
        self.separator = separator
        self.literals = literals  # scalars, and objects written as one literal instead
        self.ws = ws
        # Element markers are read beside values and the name class of any element.
        builder.spell(separator)

    def closing(self, key: str) -> str:
        """The text that closes the element named key."""
        return f"{self.separator}</{key}>"

    def value(self, schema: Any, hint: str, closing: str) -> str:
        """Match a nested value of schema up to (not including) its closing text."""
        if schema is True or schema == {}:
            anything = seq(self.any_element(), star(self.any_element()))
            return alt(text_excluding(self.builder, [closing], "tag-text"),
                       self.literals.any_value(), anything)
        split = split_by_type(schema)
        forms = []
        if "string" in split:
            forms.append(text_excluding(self.builder, [closing], "tag-text"))
        literal_types = [split[t] for t in split if t != "string"]
        if literal_types:
            forms.append(self.literals.value(union(literal_types), hint))
        forms.append(self.structured(schema, hint))
        return alt(*[f for f in forms if f]) if any(forms) else "()"

    def structured(self, schema: Any, hint: str) -> str:
        """Match the objects and arrays of schema written as elements ("" if it has none)."""
        split = split_by_type(schema)
        forms = []
        if "object" in split:
            forms.append(self._object(split["object"], hint))
        if "array" in split:
            forms.append(self._items(split["array"], hint))
        return alt(*forms) if forms else ""

    def element(self, key: str, schema: Any, hint: str) -> str:
        """Match one element: its opening tag, its value and its closing tag."""
        body = seq(self.ws, chars(f"{self.separator}<{key}>"),
                   self.value(schema, hint, self.closing(key)), chars(self.closing(key)))
        return self.builder.add(f"{hint}-element", body)

    def _object(self, schema: Any, hint: str) -> str:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        members = [self.element(k, s, f"{hint}-{k}") for k, s in (properties or {}).items()
                   if isinstance(k, str)]
        extra = schema.get("additionalProperties") if isinstance(schema, dict) else None
        if not members or extra not in (None, False):
            members.append(self.any_element())
        return self.builder.add(f"{hint}-elements", star(alt(*members)))

    def _items(self, schema: Any, hint: str) -> str:
        items = schema.get("items", True) if isinstance(schema, dict) else True
        item = self.element(ITEM, items if isinstance(items, dict | bool) else True,
                            f"{hint}-item")
        return self.builder.add(f"{hint}-items", star(item))

    def any_element(self) -> str:
        """An element of any name holding text or further elements (recursive)."""
        key = ("tag-any-element", self.separator)
        if key in self.builder.memo:
            return self.builder.memo[key]
        element = self.builder.reserve("tag-any-element")
        self.builder.memo[key] = element
        name = self.builder.add("tag-name", NAME_CHARS)
        text = text_excluding(self.builder, [f"{self.separator}</"], "tag-any-text")
        inner = alt(text, seq(element, star(element)))
        self.builder.define(element, seq(
            self.ws, chars(f"{self.separator}<"), name, chars(">"), inner,
            chars(f"{self.separator}</"), name, chars(">")))
        return element
