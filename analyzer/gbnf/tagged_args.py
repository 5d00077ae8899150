"""Rules for arguments that each sit in their own markers (TAG_WITH_TAGGED).

One argument reads `name_prefix KEY name_suffix VALUE`. A string VALUE is the raw text
between value_prefix and value_suffix; any other value follows a typed prefix, one per JSON
type when the template names the type (Kimi-K3's `type="number"<|sep|>`). A template that
closes a value by repeating the argument's name (MiniMax-M3's `<city>Tokyo</city>`) ends
every value with that name, and may write nested values as elements. A template that quotes
strings with a marker of its own (Gemma's `<|"|>`) writes nested values in that dialect.
"""

from __future__ import annotations

import itertools
from typing import Any

from analyzer.gbnf.builder import GrammarBuilder, alt, chars, opt, seq, star
from analyzer.gbnf.dialect import QuotedDialectConverter
from analyzer.gbnf.json_schema import SchemaConverter
from analyzer.gbnf.markers import spaced_marker
from analyzer.gbnf.schema_types import split_by_type, union
from analyzer.gbnf.tag_elements import TagElements
from analyzer.gbnf.tool_specs import ToolSpec
from analyzer.gbnf.until import text_excluding
from analyzer.model import ToolsAnalysis

PLAIN_QUOTES = ("'", '"')
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"


class TaggedArguments:
    """Build the argument rules of one analysed TAG_WITH_TAGGED format."""

    def __init__(self, builder: GrammarBuilder, tools: ToolsAnalysis, ws: str) -> None:
        self.builder = builder
        self.tools = tools
        self.args = tools.arguments
        self.ws = ws
        # Values are written by str() or tojson depending on the template: accept both.
        self.literals: SchemaConverter = SchemaConverter(builder, python_dicts=True,
                                                         sorted_keys=True)
        quote = self._dialect_quote()
        if quote:
            self.literals = QuotedDialectConverter(builder, quote)
        self.tags = self._tag_elements()

    def _dialect_quote(self) -> str:
        """The marker a template quotes strings with, when it writes bare non-strings."""
        prefix, suffix = self.args.value_prefix.strip(), self.args.value_suffix.strip()
        typed = self.args.typed_value_prefix.strip() or self.args.typed_value_suffix.strip()
        plain = prefix in PLAIN_QUOTES or bool(self.args.typed_prefixes)
        return prefix if prefix and prefix == suffix and not typed and not plain else ""

    def _tag_elements(self) -> TagElements | None:
        suffix = self.args.value_suffix.strip()
        if not self.args.suffix_echoes_name or not suffix.endswith("</"):
            return None
        return TagElements(self.builder, suffix[:-2], self.literals, self.ws)

    def marker(self, text: str, *, lead: bool = True, trail: bool = True) -> str:
        return spaced_marker(self.ws, text, lead=lead, trail=trail)

    # -- the argument list -----------------------------------------------------------------

    def arguments(self, spec: ToolSpec) -> str:
        """Each required argument once, optional ones anywhere in between.

        Templates write arguments in the call's own order, and some sort them, so required
        arguments may come in any order when there are at most three of them; beyond that,
        schema order or alphabetical order.
        """
        blocks = {key: self.argument(spec, key, schema)
                  for key, schema in spec.properties.items()}
        for key in spec.required:
            blocks.setdefault(key, self.argument(spec, key, True))
        required = [k for k in blocks if k in spec.required]
        optional = [blocks[k] for k in blocks if k not in spec.required]
        sep = self.marker(self.args.separator) or self.ws
        any_optional = alt(*optional) if optional else ""
        if not required:
            return opt(seq(any_optional, star(seq(sep, any_optional)))) if optional else ""
        after = star(seq(sep, any_optional)) if optional else ""
        before = star(seq(any_optional, sep)) if optional else ""
        orders = itertools.permutations(required) if len(required) <= 3 else \
            [required, sorted(required)]
        chains = [seq(*[seq(sep if i else "", blocks[key], after) for i, key in enumerate(order)])
                  for order in orders]
        return seq(before, alt(*chains))

    def argument(self, spec: ToolSpec, key: str, schema: Any) -> str:
        """One argument: its name in the name markers, then a value of any allowed type."""
        name = seq(self.marker(self.args.name_prefix, trail=False), chars(key),
                   self.marker(self.args.name_suffix, lead=False))
        split = split_by_type(schema)
        forms = [self._string_form(key, split["string"])] if "string" in split else []
        others = {t: s for t, s in split.items() if t != "string"}
        forms += self._typed_forms(f"{spec.name}-{key}", key, others)
        return self.builder.add(f"{spec.name}-arg-{key}", seq(name, alt(*forms)))

    # -- values ----------------------------------------------------------------------------

    def closing(self, suffix: str, key: str) -> str:
        """What closes a value: its suffix, then the key again if the template echoes it."""
        if self.args.suffix_echoes_name and suffix.strip():
            return suffix.strip() + key + self.args.echo_suffix.strip()
        return suffix

    def _string_form(self, key: str, schema: Any) -> str:
        """A string value between its markers (raw text, CDATA, or a quoted literal)."""
        prefix = self.marker(self.args.value_prefix)
        closing = self.marker(self.closing(self.args.value_suffix, key))
        forms = [seq(prefix, self._raw_value(key, schema), closing)]
        if self._xml_style():
            # XML-style markup: a value may be a CDATA section (it may then hold the closer).
            cdata = text_excluding(self.builder, [CDATA_CLOSE], "cdata")
            self.builder.spell(CDATA_OPEN)  # read beside the raw value's text
            forms.append(seq(prefix, chars(CDATA_OPEN), cdata, chars(CDATA_CLOSE), closing))
        other = self._other_quote()
        if other:
            # A model may quote a string the other way, as a Python or JSON literal with
            # escapes: `city="Paris"` for a template's `city='Paris'`. (Only the other quote:
            # llguidance cannot split a literal lexeme that shares the raw form's first quote.)
            forms.append(self.literals.quoted_string(other))
        return alt(*forms)

    def _xml_style(self) -> bool:
        """Values closed by `</...>` and names in attributes (`<param name="K">`)."""
        return self.args.value_suffix.strip().startswith("</") and \
            self.args.name_prefix.strip().endswith('="')

    def _other_quote(self) -> str:
        """For values between plain quotes, the other quote ("" for any other markup)."""
        prefix = self.args.value_prefix.strip()
        if prefix not in PLAIN_QUOTES or self.args.value_suffix.strip() != prefix:
            return ""
        return next(q for q in PLAIN_QUOTES if q != prefix)

    def _raw_value(self, key: str, schema: Any) -> str:
        """A string as the template writes it: one of its enum values, or text up to its end."""
        values = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
            return alt(*(chars(v) for v in values))
        return text_excluding(self.builder, self._value_ends(key), "raw-value")

    def _value_ends(self, key: str) -> list[str]:
        """What ends a raw string value: its suffix, or else whatever may follow it."""
        args, function, fmt = self.args, self.tools.function, self.tools.format
        if args.value_suffix.strip():
            return [self.closing(args.value_suffix, key).strip()]
        followers = (args.separator, args.name_prefix, args.end, function.close,
                     fmt.per_call_end, fmt.section_end)
        return [m.strip() for m in followers if m.strip()]

    def _typed_suffix(self) -> str:
        """The suffix after a non-string: its own, else the string one (Kimi-K3 has one)."""
        args = self.args
        if args.typed_value_suffix.strip() or not (args.typed_value_prefix.strip() or
                                                   args.typed_prefixes):
            return args.typed_value_suffix
        return args.value_suffix

    def _prefix_of(self, json_type: str) -> str:
        """The prefix of one JSON type's values (the single typed prefix when not per type)."""
        found = (t.prefix for t in self.args.typed_prefixes if t.json_type == json_type)
        return next(found, self.args.typed_value_prefix)

    def _typed_forms(self, hint: str, key: str, by_type: dict[str, Any]) -> list[str]:
        """Non-string values, grouped by the prefix the template writes for their type."""
        groups: dict[str, list[str]] = {}
        for json_type in by_type:
            groups.setdefault(self._prefix_of(json_type), []).append(json_type)
        closing = self.marker(self.closing(self._typed_suffix(), key))
        if not self.args.value_prefix.strip():
            self.builder.spell(*groups)  # beside a raw string value, which has no prefix
        return [seq(self.marker(prefix), self.ws,
                    self._typed_value([by_type[t] for t in types], hint),
                    self.ws, closing)
                for prefix, types in groups.items()]

    def _typed_value(self, schemas: list[Any], hint: str) -> str:
        value = self.literals.value(union(schemas), hint)
        elements = self.tags.structured(union(schemas), hint) if self.tags else ""
        return alt(value, elements) if elements else value

