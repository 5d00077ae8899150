"""Argument values in a JSON dialect whose strings are quoted by a marker (Gemma's `<|"|>`).

Such a template writes `[<|"|>a<|"|>,<|"|>b<|"|>]` and `{theme:<|"|>dark<|"|>,count:3}`: JSON
structure, strings between the quote marker, keys bare or quoted. The value is matched as a
whole and handed to the mapper, which asks this dialect for its JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from json.encoder import encode_basestring
from typing import Any

from analyzer.peg import Expr
from analyzer.peg.json_values import NO_VALUE, SCAN_ONCE
from analyzer.peg.state import FAIL, UNTRACED, MatchState

SPACE = re.compile(r"\s*")
SCALAR = re.compile(r"[^,:\[\]{}\s]+")
PYTHON_WORDS: dict[str, Any] = {"None": None, "True": True, "False": False}
# Scalars read without json.loads: its own literals, and integers it reads as int() does.
JSON_WORDS: dict[str, Any] = {"null": None, "true": True, "false": False}
INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
# json.dumps(value, ensure_ascii=False), without building an encoder per value.
JSON_TEXT = json.JSONEncoder(ensure_ascii=False)
# The C encoder JSON_TEXT.encode builds at every call, built once (a decoded value holds no
# cycles to check for); None where json has no C speedups.
MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
C_JSON_TEXT: Callable[[Any, int], list[str]] | None = MAKE_ENCODER and MAKE_ENCODER(
    None, JSON_TEXT.default, encode_basestring, None, ": ", ", ", False, False, True)
# A bare key in a translated value's structure (what read_key reads: a whole token before
# `:`), to be quoted; characters JSON would read otherwise (`"`, `\`) are refused first.
BARE_KEY = re.compile(r"(?<![^,:\[\]{}\s])([^,:\[\]{}\s\x00-\x1f]++)(?=\s*+:)")
UNQUOTABLE = re.compile(r'["\\]')
# What may not be in a quote the translation splits at (it would split structure).
STRUCTURE = frozenset(",:[]{}")
JSON_SPACE = " \t\n\r"


class Incomplete(Exception):
    """The text ended inside the value."""


@dataclass(frozen=True)
class QuotedDialect:
    """JSON whose strings sit between a quote marker and whose keys may be bare."""

    quote: str

    def to_json(self, text: str) -> str:
        """Return the JSON text of a complete value written in this dialect."""
        if text in JSON_WORDS:  # a bare literal or integer is its own JSON (most scalars)
            return text
        if len(text) < 19 and INTEGER.fullmatch(text):
            return str(int(text))  # as json writes the int read_scalar reads (`-0` is `0`)
        translated = self.translated(text) if self.splits else None
        if translated is not None:
            return translated
        value, _ = self.read(text, 0, final=True)
        return JSON_TEXT.encode(value)

    @cached_property
    def splits(self) -> bool:
        """Tell whether the quote can be split at (no structure or whitespace in it)."""
        quote = self.quote
        return bool(quote) and STRUCTURE.isdisjoint(quote) and not any(
            c.isspace() for c in quote) and C_JSON_TEXT is not None

    def translated(self, text: str) -> str | None:
        """Return the JSON text of a complete value by C-speed steps, or None where they do
        not settle it (read decides): strings between the quotes JSON-encoded, bare keys
        quoted, then decoded and encoded by json's C scanner and encoder.

        Where json reads the whole translation, it reads what read reads: a string, a key or
        a scalar is a token of both only where it stands between the same delimiters (JSON
        refuses a token next to a string, read a string that is not a whole token), every
        number or literal JSON accepts is one scalar_value reads the same, and objects keep
        their first key's place and last value in both. Anything else (Python's literals,
        words, non-JSON whitespace, `"` or `\\` outside strings) fails json's reading."""
        parts = text.split(self.quote)
        if not len(parts) & 1:
            return None  # a string left open
        structure = "\x00".join(parts[0::2])  # between strings (no \x00 in JSON's structure)
        if UNQUOTABLE.search(structure) is not None:
            return None
        try:
            parts[0::2] = '"'.join(BARE_KEY.split(structure)).split("\x00")
        except ValueError:  # a \x00 of the text's own: the parts no longer line up
            return None
        parts[1::2] = map(encode_basestring, parts[1::2])
        json_text = "".join(parts).lstrip(JSON_SPACE)
        try:
            value, end = SCAN_ONCE(json_text, 0)  # json.loads's scanner, no frames around
        except NO_VALUE:
            return None
        if end != len(json_text) or C_JSON_TEXT is None:
            return None
        return "".join(C_JSON_TEXT(value, 0))

    def read(self, text: str, pos: int, final: bool = False) -> tuple[Any, int]:
        """Read one value at pos; return it and where it ends (Incomplete, ValueError).

        One loop over the value's leaves, the containers open around them on a stack (not a
        call per item: the mapper reads every value of a call this way); a member whose value
        is a leaf is read with its key by one regex (read_key and the loop decide the rest)."""
        quote, size, n, space = self.quote, len(self.quote), len(text), SPACE.match
        leaf_member = leaf_member_pattern(quote).match
        stack: list[tuple[list[Any], str]] = []  # the open containers: items, closing
        keys: list[str] = []  # the key of the member being read, per open object
        member = False  # a member of the innermost open object begins at pos
        while True:
            found = leaf_member(text, pos) if member else None
            if found is not None:  # `key: string` or `key: scalar`
                quoted, bare, string, scalar = found.groups()
                keys.append(bare if quoted is None else quoted)
                pos = found.end()
                if string is not None:
                    value: Any = string
                elif pos >= n and not final:
                    raise Incomplete  # more digits or letters may follow
                else:
                    value = scalar_value(scalar)
            else:
                if member:
                    pos = self.read_key(text, pos, keys)
                pos = space(text, pos).end()  # type: ignore[union-attr]  # * always matches
                if text.startswith(quote, pos):
                    end = text.find(quote, pos + size)
                    if end < 0:
                        raise Incomplete
                    value = text[pos + size : end]
                    pos = end + size
                elif pos >= n:
                    raise Incomplete
                elif text[pos] == "[" or text[pos] == "{":
                    close = "]" if text[pos] == "[" else "}"
                    pos = space(text, pos + 1).end()  # type: ignore[union-attr]
                    if pos >= n:
                        raise Incomplete
                    if text[pos] != close:
                        stack.append(([], close))
                        member = close == "}"
                        continue  # its first item
                    value, pos = ({} if close == "}" else []), pos + 1
                else:
                    value, pos = read_scalar(text, pos, final)
            member = False
            while stack:  # the value is an item: the next one, or its container is done
                items, close = stack[-1]
                items.append((keys.pop(), value) if close == "}" else value)
                pos = space(text, pos).end()  # type: ignore[union-attr]
                if pos >= n:
                    raise Incomplete
                if text[pos] == close:
                    stack.pop()
                    value, pos = (dict(items) if close == "}" else items), pos + 1
                    continue
                if text[pos] != ",":
                    raise ValueError(f"expected `,` or `{close}`")
                pos += 1
                member = close == "}"
                break
            else:
                return value, pos

    def read_key(self, text: str, pos: int, keys: list[str]) -> int:
        """Read a member's key (quoted or bare) and its colon; add the key to keys and return
        where its value begins."""
        pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(self.quote, pos):
            end = text.find(self.quote, pos + len(self.quote))
            if end < 0:
                raise Incomplete
            key, pos = text[pos + len(self.quote) : end], end + len(self.quote)
        else:
            found = SCALAR.match(text, pos)
            if found is None:
                raise Incomplete if pos >= len(text) else ValueError("expected a key")
            key, pos = found.group(), found.end()
        pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            raise Incomplete
        if text[pos] != ":":
            raise ValueError("expected `:`")
        keys.append(key)
        return pos + 1


def read_scalar(text: str, pos: int, final: bool) -> tuple[Any, int]:
    """Read a bare number, true/false/null, or word (kept as a string)."""
    found = SCALAR.match(text, pos)
    if found is None:
        raise ValueError("expected a value")
    if found.end() >= len(text) and not final:
        raise Incomplete  # more digits or letters may follow
    return scalar_value(found.group()), found.end()


def scalar_value(token: str) -> Any:
    """Return the value of a bare token: a literal or number JSON reads, else the text."""
    if token in PYTHON_WORDS:  # a template that writes Python's spelling of these literals
        return PYTHON_WORDS[token]
    if token in JSON_WORDS:
        return JSON_WORDS[token]
    if len(token) < 19 and INTEGER.fullmatch(token):  # (int() refuses thousands of digits)
        return int(token)
    try:
        return json.loads(token)
    except ValueError:
        return token


@cache
def leaf_member_pattern(quote: str) -> re.Pattern[str]:
    """A regex of an object member whose value is a leaf, read as read_key and the value's
    reading read it: the key quoted or bare (groups 1, 2), whitespace and the colon, the
    value a string (group 3, to the first closing quote) or a scalar (group 4). Atomic, as
    they never go back (a later colon must not stretch the key to a later quote)."""
    marker = re.escape(quote)
    leaf = rf"(?>{marker}(?s:(.*?)){marker}|(?!{marker})([^,:\[\]{{}}\s]+))"
    return re.compile(rf"\s*+{leaf}\s*+:\s*+{leaf}")


def whole_value_pattern(quote: str, depth: int) -> re.Pattern[str]:
    """A regex matching what QuotedDialect.read reads, to the same end, in a complete text,
    for values nested at most depth containers deep (anything else it does not match): a
    string (to the first closing quote), a scalar, or containers of such, whitespace around
    each as read skips it; atomic and possessive, as read never goes back."""
    marker = re.escape(quote)
    leaf = rf"(?>{marker}(?s:.*?){marker}|(?!{marker})[^,:\[\]{{}}\s]+)"
    value = r"\s*+" + leaf
    for _ in range(depth):
        member = rf"\s*+{leaf}\s*+:{value}"
        array = rf"\[\s*+(?:\]|{value}(?:\s*+,{value})*+\s*+\])"
        obj = rf"\{{\s*+(?:\}}|{member}(?:\s*+,{member})*+\s*+\}})"
        value = rf"\s*+(?:{leaf}|{array}|{obj})"
    return re.compile(value)


class DialectValue(Expr):
    """Match one value written in a quoted dialect. A whole parse that records no failures
    first tries the regex of values a few containers deep (one call instead of a read per
    item); where it does not match, read decides."""

    __slots__ = ("dialect", "whole")

    def __init__(self, dialect: QuotedDialect) -> None:
        self.dialect = dialect
        self.whole = whole_value_pattern(dialect.quote, 3)

    def match(self, st: MatchState, pos: int) -> int:
        if not st.partial and st.fail_pos == UNTRACED:
            found = self.whole.match(st.text, pos)
            if found is not None:
                return found.end()
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

    def tail_pattern(self) -> str:
        # A whole untraced parse takes this regex's match first (LeadPattern's tail).
        return self.whole.pattern

    def may_fail(self, text: str, pos: int) -> bool:
        # A value that opens with the quote is a string: until its closing quote comes it
        # waits, then it ends there (a stream held by a choice between a quoted string and
        # this value need not run again for every chunk of the string).
        at = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        return not text.startswith(self.dialect.quote, at)

    def describe(self) -> str:
        return f"value(quote={json.dumps(self.dialect.quote, ensure_ascii=False)})"
