"""Argument values in a JSON dialect whose strings are quoted by a marker (Gemma's `<|"|>`).

Such a template writes `[<|"|>a<|"|>,<|"|>b<|"|>]` and `{theme:<|"|>dark<|"|>,count:3}`: JSON
structure, strings between the quote marker, keys bare or quoted. The value is matched as a
whole and handed to the mapper, which asks this dialect for its JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from analyzer.peg import Expr
from analyzer.peg.state import FAIL, MatchState

SPACE = re.compile(r"\s*")
SCALAR = re.compile(r"[^,:\[\]{}\s]+")
PYTHON_WORDS: dict[str, Any] = {"None": None, "True": True, "False": False}


class Incomplete(Exception):
    """The text ended inside the value."""


@dataclass(frozen=True)
class QuotedDialect:
    """JSON whose strings sit between a quote marker and whose keys may be bare."""

    quote: str

    def to_json(self, text: str) -> str:
        """Return the JSON text of a complete value written in this dialect."""
        value, _ = self.read(text, 0, final=True)
        return json.dumps(value, ensure_ascii=False)

    def read(self, text: str, pos: int, final: bool = False) -> tuple[Any, int]:
        """Read one value at pos; return it and where it ends (Incomplete, ValueError)."""
        pos = skip(text, pos)
        if text.startswith(self.quote, pos):
            return self.read_string(text, pos)
        if pos >= len(text):
            raise Incomplete
        if text[pos] == "[":
            return self.read_items(text, pos + 1, "]", self.read, final)
        if text[pos] == "{":
            return self.read_items(text, pos + 1, "}", self.read_member, final)
        return read_scalar(text, pos, final)

    def read_string(self, text: str, pos: int) -> tuple[str, int]:
        """Read a quoted string."""
        start = pos + len(self.quote)
        end = text.find(self.quote, start)
        if end < 0:
            raise Incomplete
        return text[start:end], end + len(self.quote)

    def read_member(self, text: str, pos: int, final: bool) -> tuple[tuple[str, Any], int]:
        """Read `key: value` of an object (the key quoted or bare)."""
        pos = skip(text, pos)
        if text.startswith(self.quote, pos):
            key, pos = self.read_string(text, pos)
        else:
            found = SCALAR.match(text, pos)
            if found is None:
                raise Incomplete if pos >= len(text) else ValueError("expected a key")
            key, pos = found.group(), found.end()
        pos = skip(text, pos)
        if pos >= len(text):
            raise Incomplete
        if text[pos] != ":":
            raise ValueError("expected `:`")
        value, pos = self.read(text, pos + 1, final)
        return (key, value), pos

    def read_items(
        self, text: str, pos: int, close: str, item: Any, final: bool
    ) -> tuple[Any, int]:
        """Read the items of an array or the members of an object up to close."""
        items: list[Any] = []
        pos = skip(text, pos)
        while True:
            if pos >= len(text):
                raise Incomplete
            if text[pos] == close:
                return (dict(items) if close == "}" else items), pos + 1
            if items:
                if text[pos] != ",":
                    raise ValueError(f"expected `,` or `{close}`")
                pos += 1
            value, pos = item(text, pos, final)
            items.append(value)
            pos = skip(text, pos)


def skip(text: str, pos: int) -> int:
    """Skip whitespace."""
    found = SPACE.match(text, pos)
    return found.end() if found else pos


def read_scalar(text: str, pos: int, final: bool) -> tuple[Any, int]:
    """Read a bare number, true/false/null, or word (kept as a string)."""
    found = SCALAR.match(text, pos)
    if found is None:
        raise ValueError("expected a value")
    if found.end() >= len(text) and not final:
        raise Incomplete  # more digits or letters may follow
    token = found.group()
    if token in PYTHON_WORDS:  # a template that writes Python's spelling of these literals
        return PYTHON_WORDS[token], found.end()
    try:
        return json.loads(token), found.end()
    except ValueError:
        return token, found.end()


class DialectValue(Expr):
    """Match one value written in a quoted dialect."""

    __slots__ = ("dialect",)

    def __init__(self, dialect: QuotedDialect) -> None:
        self.dialect = dialect

    def match(self, st: MatchState, pos: int) -> int:
        try:
            _, end = self.dialect.read(st.text, pos, final=not st.partial)
        except Incomplete:
            if st.partial:
                return st.need(self, pos, st.n)
            if pos < st.fail_pos:
                return FAIL  # not recorded: no message to build
            return st.fail(pos, f"a value quoted with `{self.dialect.quote}`")
        except ValueError:
            if pos < st.fail_pos:
                return FAIL  # not recorded: no message to build
            return st.fail(pos, f"a value quoted with `{self.dialect.quote}`")
        return end

    def describe(self) -> str:
        return f"value(quote={json.dumps(self.dialect.quote, ensure_ascii=False)})"
