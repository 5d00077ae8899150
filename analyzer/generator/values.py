"""Tagged argument values: raw text between value markers, typed later by the schema.

The template's exact padding matters: Qwen3-Coder writes `>\nVALUE\n</parameter>`, so one
newline on each side belongs to the markup, and a value ending in a newline keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from analyzer import peg as p
from analyzer.generator.build import Build, StandsFor, spaced
from analyzer.generator.dialect import DialectValue, QuotedDialect
from analyzer.generator.tag_dialect import TagDialect
from analyzer.generator.value_ends import ValueText, intruders, tolerant_closing
from analyzer.model import Analysis
from analyzer.parsing.options import canonical
from analyzer.peg import Role
from analyzer.peg.expressions import CHOICE_LEVEL
from analyzer.peg.json_values import declared_types
from analyzer.peg.scanning import first_chars, held_back, waiting_before_markers
from analyzer.peg.state import FAIL, MatchState

QUOTES = ("'", '"')
# The schema of an argument the request does not declare: a JSON value if the text is one
# (a number, true, an object...), else a string; as written, never dropped.
UNDECLARED: Mapping[str, Any] = {
    "type": ["integer", "number", "boolean", "null", "array", "object", "string"]}
STRING: Mapping[str, Any] = {"type": "string"}
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"


@lru_cache(maxsize=256)
def value_padding(analysis: Analysis) -> tuple[str, str]:
    """Return the whitespace the template writes right before and right after a value."""
    comparison = next((c for c in analysis.comparisons if c.id == "A2"), None)
    if comparison is None or comparison.diff is None:
        return "", ""
    before, after = comparison.diff.prefix, comparison.diff.suffix
    lead = before[len(before.rstrip()) :]
    trail = after[: len(after) - len(after.lstrip())]
    return lead, trail


class UntilClosing(p.Expr):
    """Match up to a closing marker, leaving out the padding the template writes before it.

    `until(pad + end, end)` would do, but one str.find is much faster than a regex search."""

    __slots__ = ("end", "pad", "markers", "wake")

    def __init__(self, end: str, pad: str) -> None:
        self.end = end
        self.pad = pad
        self.markers = (pad + end, end)
        self.wake = first_chars(self.markers)

    def match(self, st: MatchState, pos: int) -> int:
        found = st.text.find(self.end, pos)
        if found >= 0:
            padded = self.pad and st.text.endswith(self.pad, pos, found)
            return found - len(self.pad) if padded else found
        if not st.partial:
            return st.n
        safe = st.n - held_back(st.text, pos, st.n, self.markers)
        return st.need(self, safe, safe)

    def waiting_end(self, text: str, at: int) -> int:
        # As match does without the closing: wait before the tail that may begin it.
        rest = text[at:] if at else text
        if self.wake is not None and self.wake.isdisjoint(rest):  # the fast answer
            return len(text)
        return -1 if self.end in rest else waiting_before_markers(text, at, self.markers)

    def describe(self) -> str:
        return f"until-closing({self.end!r}, pad={self.pad!r})"


class PaddedLiteral(p.Expr):
    """Match `pad? text` in one step (a value's closing marker, in every argument)."""

    __slots__ = ("pad", "text", "whole")

    def __init__(self, pad: str, text: str) -> None:
        self.pad = pad
        self.text = text
        self.whole = pad + text

    def match(self, st: MatchState, pos: int) -> int:
        if st.text.startswith(self.whole, pos):
            return pos + len(self.whole)
        rest = st.text[pos : pos + len(self.whole)]
        if st.partial and len(rest) < len(self.whole) and self.whole.startswith(rest):
            return st.need(self, pos, pos)  # the padding may still be coming
        if st.text.startswith(self.text, pos):
            return pos + len(self.text)
        if st.partial and st.n - pos < len(self.text) and self.text.startswith(rest):
            return st.need(self, pos, pos)
        if pos < st.fail_pos:
            return FAIL  # not recorded: no message to build
        return st.fail(pos, f"`{self.text}`")

    def waiting_end(self, text: str, at: int) -> int:
        # Less than `pad text` or than `text`: it waits where it did.
        rest = text[at:]
        if len(rest) < len(self.whole) and self.whole.startswith(rest):
            return at
        return at if len(rest) < len(self.text) and self.text.startswith(rest) else -1

    def describe(self) -> str:
        return f"{self.pad!r}? {self.text!r}"


class TolerantClosing(StandsFor):
    """A value's closing tag or what stands for it (`pad? END | noted(...)`, tolerant_closing):
    where `pad END` or `END` is there (at every argument's end) it is taken without the
    choice around it. The choice would take it just so, in any run: its first alternative
    matches there at once and records nothing."""

    __slots__ = ("choice", "whole", "end", "bare")
    level = CHOICE_LEVEL  # described as the choice it stands for

    def __init__(self, choice: p.Expr, pad: str, end: str) -> None:
        self.choice = choice
        self.whole = pad + end
        self.end = end
        # `END` alone is taken where it cannot be the start of `pad END` still arriving
        # (PaddedLiteral waits there): the padding is whitespace, the tag is not.
        self.bare = not pad or pad[:1] != end[:1]

    def match(self, st: MatchState, pos: int) -> int:
        text = st.text
        if text.startswith(self.whole, pos):
            return pos + len(self.whole)
        if self.bare and text.startswith(self.end, pos):
            return pos + len(self.end)
        return self.general(st, pos)

    def tail_pattern(self) -> str | None:
        # Where `pad END` or `END` is there, match takes it as the regex does.
        whole, end = re.escape(self.whole), re.escape(self.end)
        return f"(?>{whole}|{end})" if self.bare and self.whole != self.end else whole

    @property
    def general_form(self) -> p.Expr:
        return self.choice


def raw_value(b: Build, schema: Mapping[str, Any], suffix: str) -> p.Expr:
    """Match padding, the value text up to the closing marker, padding and the marker."""
    lead, trail = value_padding(b.analysis)
    end = suffix.strip()
    stops = intruders(b, end) if end else None
    scan = UntilClosing(end, trail) if stops is None else ValueText(end, trail, stops)
    text = p.arg_string_value(scan if end else p.rest(), schema)
    if end.startswith("</") and b.analysis.tools.arguments.name_prefix.strip().endswith('="'):
        # XML-style markup (names in attributes): a value may be a CDATA section.
        text = p.choice(cdata_value(schema), text)
    closing = PaddedLiteral(trail, end) if trail else p.literal(end)
    if stops is not None:  # a missing or wrong closing tag is read, and noted
        closing = TolerantClosing(tolerant_closing(end, closing, stops), trail, end)
    return PaddedLiteral(lead, "") + text + closing if lead else text + closing


def cdata_value(schema: Mapping[str, Any]) -> p.Expr:
    """Match an XML CDATA section, capturing what it holds."""
    return (p.literal(CDATA_OPEN) + p.arg_string_value(p.until(CDATA_CLOSE), schema)
            + p.literal(CDATA_CLOSE))


def bare_value(b: Build, schema: Mapping[str, Any]) -> p.Expr:
    """Match an unwrapped value: JSON-like, its strings quoted the way the template quotes them."""
    dialect = QuotedDialect(b.analysis.tools.arguments.value_prefix.strip())
    return p.capture(Role.ARG_JSON_VALUE, DialectValue(dialect), dialect)


def closing(b: Build, key: str, suffix: str) -> str:
    """Return what closes a value: its suffix, and the key again if the template echoes it."""
    args = b.analysis.tools.arguments
    if args.suffix_echoes_name:
        return suffix.strip() + key + args.echo_suffix.strip()
    return suffix.strip()


# The types a value of which holds no nested tag.
SCALARS = frozenset(("number", "integer", "boolean", "null"))


def nested_value(b: Build, key: str, schema: Mapping[str, Any]) -> p.Expr:
    """Match a value closed by an echoed tag; nested values are tags too (unless a string or
    a scalar)."""
    args = b.analysis.tools.arguments
    end = closing(b, key, args.value_suffix)
    types = declared_types(schema)
    if types[:1] == ["string"] or not args.value_suffix.strip().endswith("</") or (
            types and SCALARS.issuperset(types)):
        # A string, or a scalar (no nested tags in it): text up to the closing tag, which
        # may be missing (a value the output ends with, `<limit>5`), as a string's
        return raw_value(b, schema, end)
    dialect = TagDialect(args.value_suffix.strip()[:-2], canonical(dict(schema)))
    return p.capture(Role.ARG_JSON_VALUE, p.until(end), dialect) + p.literal(end)


def typed_forms(b: Build, key: str, schema: Mapping[str, Any]) -> list[p.Expr]:
    """Match a non-string value after each prefix the template writes for non-strings."""
    args = b.analysis.tools.arguments
    prefixes = [t.prefix.strip() for t in args.typed_prefixes] or [args.typed_value_prefix.strip()]
    suffix = closing(b, key, args.typed_value_suffix or args.value_suffix)
    prefix = args.value_prefix.strip()
    return [spaced(t) + raw_value(b, schema, suffix) for t in dict.fromkeys(prefixes)
            if t and t != prefix]


def argument_value(b: Build, key: str, schema: Mapping[str, Any]) -> p.Expr:
    """Match a tagged argument's value as the template's value markers frame it."""
    args = b.analysis.tools.arguments
    prefix, suffix = args.value_prefix.strip(), args.value_suffix.strip()
    typed_prefix, typed_suffix = args.typed_value_prefix.strip(), args.typed_value_suffix.strip()
    if prefix in QUOTES and suffix == prefix:
        return p.space() + p.arg_json_value(p.json_value(python=True))
    typed = typed_forms(b, key, schema)
    # Where the template marks non-strings apart, its string marker says "string" even for
    # an argument the schema does not declare.
    string_schema = STRING if typed and schema is UNDECLARED else schema
    if args.suffix_echoes_name:
        string_form = spaced(prefix) + nested_value(b, key, string_schema)
    else:
        string_form = spaced(prefix) + raw_value(b, string_schema, suffix)
    if typed:
        return p.choice(string_form, *typed)
    if prefix and suffix == prefix and not typed_prefix and not typed_suffix:
        return p.choice(string_form, bare_value(b, schema))
    return string_form
