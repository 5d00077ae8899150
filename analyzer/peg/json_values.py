"""JSON value expressions: any value (strict or python-dict flavour), strings, schema-typed values.

A complete strict value is decoded by json's C scanner (`scan_once`); the resumable scanner
only runs where the decoder cannot answer (unfinished input, python flavour).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from analyzer.peg.expressions import Expr
from analyzer.peg.json_scan import (
    COMPLETE,
    INCOMPLETE,
    INITIAL,
    PYTHON,
    PYTHON_BODY,
    PYTHON_ENDED,
    STRICT,
    STRICT_BODY,
    STRICT_ENDED,
    ScanOutcome,
    ScanState,
    closed,
)
from analyzer.peg.state import FAIL, NEED, MatchState

DECODER = json.JSONDecoder()
# The decoder's scanner itself: raw_decode is a Python frame around it that only turns its
# StopIteration (no value here) into a ValueError; values are decoded at every call.
SCAN_ONCE: Callable[[str, int], tuple[Any, int]] = DECODER.scan_once  # type: ignore[attr-defined]
# Where the C scanner gives no value: none here (StopIteration, ValueError), or nesting deeper
# than it recurses (RecursionError). The resumable scanner, which never recurses, then decides.
NO_VALUE = (StopIteration, ValueError, RecursionError)
# What a number the scanner read may go on with where a partial text ends there (`0.` of
# `0.5`, `1e` of `1e5`): the scanner reads `0`, the number's end not known yet.
NUMBER_GOES_ON = re.compile(r"(?:\.|[eE][+-]?)\Z")
STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
PYTHON_TOKEN = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\bTrue\b|\bFalse\b|\bNone\b""", re.DOTALL
)
PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}
RAW_CONTROLS = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def normalize_python_json(text: str) -> str:
    """Rewrite a python-dict flavoured value as JSON (double quotes, true/false/null)."""

    def rewrite(token: re.Match[str]) -> str:
        word = token.group()
        if word in PYTHON_WORDS:
            return PYTHON_WORDS[word]
        if word.startswith('"') and STRING.fullmatch(word):
            return word
        inner = word[1:-1]
        if "\\" not in inner and inner.isprintable():
            # No escape and nothing the compiler could refuse: the literal's value is its
            # text (what literal_eval returns, without compiling it), as json.dumps writes it.
            return encode_basestring(inner)
        # Templates may write newlines and tabs raw inside quotes: escape them to read them.
        return json.dumps(ast.literal_eval(word.translate(RAW_CONTROLS)), ensure_ascii=False)

    return PYTHON_TOKEN.sub(rewrite, text)


def decode_json(text: str, python: bool = False) -> Any:
    """Decode a complete value of either flavour."""
    return json.loads(normalize_python_json(text) if python else text)


class JsonValue(Expr):
    """Match one JSON value; with python=True also single quotes and True/False/None."""

    __slots__ = ("python",)

    def __init__(self, python: bool = False) -> None:
        self.python = python

    def match(self, st: MatchState, pos: int) -> int:
        if self.python:
            return scan_value(st, pos, self.python, INITIAL, self)
        try:
            value, end = SCAN_ONCE(st.text, pos)
        except NO_VALUE:
            return scan_value(st, pos, self.python, INITIAL, self)
        if st.partial and type(value) in (int, float) and not st.ended and (
                end == st.n or NUMBER_GOES_ON.match(st.text, end)):
            return st.need(self, pos, end)  # a number at the end may have more digits coming
        return end

    def describe(self) -> str:
        return "python-value" if self.python else "json-value"


class JsonContinue(Expr):
    """The rest of a JSON value whose beginning an earlier chunk already scanned."""

    __slots__ = ("python", "state", "body", "seen")

    def __init__(self, python: bool, state: ScanState) -> None:
        self.python = python
        self.state = state
        # Inside a string: the regex of its body (what most chunks of a stream read).
        quote = state.quote
        self.body = (PYTHON_BODY[quote] if python else STRICT_BODY) if quote else None
        # The text a stream's read_on scanned to where the value ends (or breaks), and that
        # scan's outcome: the run that follows on the same text starts with the same scan.
        self.seen: tuple[str, ScanOutcome] | None = None

    moves = True

    def match(self, st: MatchState, pos: int) -> int:
        seen = self.seen
        if seen is not None and seen[0] is st.text and not pos and st.partial:
            self.seen = None
            return scan_value(st, pos, self.python, self.state, self, seen[1])
        return scan_value(st, pos, self.python, self.state, self)

    def read_on(self, text: str) -> tuple[int, Expr]:
        # A run would scan on from this state: while the value is unfinished, it resumes where
        # the scan stopped (before a token cut short), in the state reached there.
        body, state = self.body, self.state
        start, scanned = 0, state
        if body is not None:  # inside a string, most chunks stay there: one regex, no state
            end = body.match(text).end()  # type: ignore[union-attr]  # * always matches
            size = len(text)
            if end == size or (end == size - 1 and text[end] == "\\"):
                # the scan would stop there too: at the end, or before a backslash whose
                # escape is not known yet (a chunk of escaped code often ends in one)
                return end, self
            if text[end] == state.quote:  # it closes there: the scan reads on after it
                after = closed(state)
                if after is not None:
                    start, scanned = end + 1, after
        outcome = (PYTHON if self.python else STRICT).scan(text, start, scanned, final=False)
        if outcome.status != INCOMPLETE:
            self.seen = (text, outcome)  # the run that follows starts with this scan
            return -1, self
        if outcome.state == state:
            return outcome.pos, self
        return outcome.pos, JsonContinue(self.python, outcome.state)

    def describe(self) -> str:
        return ("python-value" if self.python else "json-value") + "(continued)"


class ValueAhead(Expr):
    """A leaf where the capture of one JSON value opens (arguments told apart by their first
    character). A run stops at it when the input ends right before the value (a chunk ending
    with the marker before the arguments); a stream reads the next chunk into the value as
    the run would (read_on), when that chunk begins the object and does not end it.

    `opening` is (role, flags, info, python) of the capture the leaf opens with a `{`, or
    None when it opens none such (the stream then runs)."""

    __slots__ = ("opening",)
    moves = True
    opening: tuple[Any, int, Any, bool] | None

    def read_on(self, text: str) -> tuple[int, Expr]:
        # The run would match `{` and what follows as the value's capture does: the C decoder
        # fails (the object is unfinished: the resumable scan stopped at the end of the text,
        # where no closing brace of the object can follow), the resumable scan resumes from
        # its state. Anything else (whitespace first, another first character, a value that
        # ends, a broken one) runs.
        # (A run's C decoder that runs out of recursion gives no value, NO_VALUE: the
        # resumable scan decides there too.)
        opening = self.opening
        if opening is None or text[:1] != "{":
            return -1, self
        python = opening[3]
        outcome = (PYTHON if python else STRICT).scan(text, 0, INITIAL, final=False)
        if outcome.status != INCOMPLETE:
            return -1, self
        return outcome.pos, JsonContinue(python, outcome.state)


def scan_value(st: MatchState, pos: int, python: bool, state: ScanState, expr: Expr,
               outcome: ScanOutcome | None = None) -> int:
    """Scan a value with the resumable scanner (outcome: that scan, already made); on NEED
    resume after the scanned part."""
    if outcome is None:
        scanner = (PYTHON if python else STRICT) if not st.ended else \
            (PYTHON_ENDED if python else STRICT_ENDED)
        outcome = scanner.scan(st.text, pos, state, final=not st.partial)
    if outcome.status == COMPLETE:
        return outcome.pos
    if outcome.status == INCOMPLETE:
        if outcome.state == state and (outcome.pos == pos or isinstance(expr, JsonContinue)):
            return st.need(expr, outcome.pos, st.n)  # same state: the same expression resumes
        return st.need(JsonContinue(python, outcome.state), outcome.pos, st.n)
    return st.fail(outcome.pos, outcome.expected)


class JsonString(Expr):
    """Match one double-quoted JSON string, quotes included."""

    __slots__ = ()

    def match(self, st: MatchState, pos: int) -> int:
        found = STRING.match(st.text, pos)
        if found is not None:
            return found.end()
        if st.partial and (pos == st.n or st.text[pos] == '"'):
            outcome = STRICT.scan(st.text, pos, INITIAL, final=False)
            if outcome.status == INCOMPLETE:
                return st.need(self, pos, st.n)
        return st.fail(pos, "a JSON string")

    def describe(self) -> str:
        return "json-string"


JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}


def conforms(value: Any, schema: Mapping[str, Any]) -> bool:
    """Check a decoded value against the top level of a JSON schema (type, enum, anyOf)."""
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "const" in schema and value != schema["const"]:
        return False
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return any(conforms(value, option) for option in options)
    declared = schema.get("type")
    if declared is None:
        return True
    names = [declared] if isinstance(declared, str) else list(declared)
    return any(has_json_type(value, name) for name in names)


def has_json_type(value: Any, name: str) -> bool:
    """Tell whether value is of the named JSON type (booleans are not numbers)."""
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, JSON_TYPES.get(name, (object,)))


class SchemaValue(Expr):
    """Match a JSON value that conforms to a schema's type (string, number, enum...)."""

    __slots__ = ("schema", "python", "value")

    def __init__(self, schema: Mapping[str, Any], python: bool = False) -> None:
        self.schema = schema
        self.python = python
        self.value = JsonValue(python)

    def match(self, st: MatchState, pos: int) -> int:
        end = self.value.match(st, pos)
        if end == NEED:
            return st.need(self, pos, st.need_end)
        if end < 0:
            return end
        if conforms(decode_json(st.text[pos:end], self.python), self.schema):
            return end
        if pos < st.fail_pos:
            return FAIL  # not recorded: no message to build
        return st.fail(pos, f"a value of schema {json.dumps(self.schema, sort_keys=True)}")

    def describe(self) -> str:
        return f"schema({json.dumps(self.schema, sort_keys=True)})"


def declared_types(schema: Mapping[str, Any] | None) -> list[str]:
    """List the JSON types a schema allows, in declared order (empty: anything)."""
    if not schema:
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [str(t) for t in declared]
    options = schema.get("anyOf") or schema.get("oneOf") or []
    types = [t for option in options for t in declared_types(option)]
    if not types and "enum" in schema:
        types = [_json_type_of(v) for v in schema["enum"]]
    return list(dict.fromkeys(types))


def _json_type_of(value: Any) -> str:
    """Name the JSON type of a decoded value."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def is_string_schema(schema: Mapping[str, Any] | None) -> bool:
    """Tell whether a tagged value under this schema is plain text (streamed as it comes)."""
    types = declared_types(schema)
    return not types or types == ["string"]


@dataclass(frozen=True)
class ValueType:
    """The schema of a tagged argument value, with what the mapper needs to know precomputed."""

    schema: Mapping[str, Any] | None
    types: tuple[str, ...]  # the JSON types allowed, in declared order (empty: any)
    text_only: bool  # plain text: streamed as a JSON string as it comes

    @staticmethod
    def of(schema: Mapping[str, Any] | None) -> ValueType:
        """Describe a value under schema (None: any text)."""
        return ValueType(schema, tuple(declared_types(schema)), is_string_schema(schema))
