"""JSON arguments: `function.arguments` is always a JSON object text.

The template writes an object. A model may write it as a JSON string holding the object's
text (`"arguments": "{\"city\": \"Paris\"}"`): that string is decoded to the object, and
noted (`arguments_not_object`, accepted). Anything else (a string that holds no object, a
number, a list, null) cannot be the arguments: the call is kept with `{}` and the value is
noted as dropped, its raw text quoted in the deviation.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from msgspec import DecodeError, Raw
from msgspec.json import Decoder

from analyzer import peg as p
from analyzer.peg.captures import Capture
from analyzer.peg.expressions import SEQUENCE_LEVEL
from analyzer.peg.json_values import NO_VALUE, SCAN_ONCE, JsonString, JsonValue, ValueAhead
from analyzer.peg.scanning import SPACE, SPACE_CHARS
from analyzer.peg.state import UNTRACED, MatchState

NOT_OBJECT = ("arguments_not_object", "a JSON object")

# Checks that a text is one strict JSON value without building it (what the json scanner
# spends most of an argument object's time on: its strings and dicts, thrown away).
CHECK_JSON = Decoder(Raw).decode
# Levels of nesting the check gives away to the scanner (which runs out of recursion two
# levels before it, measured on Python 3.11; tests/.../test_whole_argument_ends_corpus.py).
HEADROOM = 8
OPEN_HEADROOM, CLOSE_HEADROOM = "[" * HEADROOM, "]" * HEADROOM
JSON_SPACE = " \t\n\r"  # the whitespace the json scanner skips
# The lowest limit sys.set_int_max_str_digits accepts (0 is none): no shorter text holds an
# integer Python refuses to convert, so the limit is not asked.
MIN_DIGITS_LIMIT = 640


class ObjectInString(JsonString):
    """Match a JSON string whose text is a JSON object (captured as a string: decoded)."""

    __slots__ = ()

    def match(self, st: MatchState, pos: int) -> int:
        end = super().match(st, pos)  # waits as itself: resumed here, where the check runs
        if end >= 0 and not holds_object(st.text[pos:end]):
            return st.fail(pos, "a JSON string holding an object")
        return end

    def describe(self) -> str:
        return "json-string(object)"


class ByFirstCharacter(ValueAhead):
    """Match the arguments by what their first character says they are: an object (the
    usual case, matched as if alone: it runs at every call, and a stream reads it as it
    comes), a string, or another value. With space, whitespace before them first (the
    `space` written before the arguments, fused by sequence(): a stream whose chunk ends
    before the arguments then waits at this leaf, and reads into the object from there)."""

    __slots__ = ("obj", "string", "other", "decoded_event", "follower", "space")

    def __init__(self, obj: p.Expr, string: p.Expr, other: p.Expr, follower: str = "",
                 space: bool = False) -> None:
        self.obj = obj
        self.string = string
        self.other = other
        # The marker the template writes after the arguments, if any: where a whole parse
        # first looks for the object's end (see object_end).
        self.follower = follower
        self.space = space
        # For an object captured as one strict JSON value: the event's role, flags and info,
        # so a whole parse that records no failures decodes it here (what the capture and
        # the value would do, two calls fewer at every call).
        self.decoded_event = decoded_capture(obj)
        # What a stream waiting here reads into (ValueAhead): the capture of one JSON value.
        self.opening = value_opening(obj)

    @property
    def level(self) -> int:  # type: ignore[override]
        return SEQUENCE_LEVEL if self.space else p.Expr.level

    def match(self, st: MatchState, pos: int) -> int:
        text, n = st.text, st.n
        if self.space and (pos == n or text[pos] in SPACE_CHARS):
            pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]  # * always matches
        if pos < n and text[pos] == "{":
            event = self.decoded_event
            if event is None or st.partial or st.fail_pos != UNTRACED:
                return self.obj.match(st, pos)  # a stream, or a trace: the general path
            end = -1
            if self.follower:  # object_end, inlined: at every call
                at = text.find(self.follower, pos)
                if at >= 0:
                    end = checked_end(text[pos:at].rstrip(JSON_SPACE), pos)
            if end < 0:
                try:
                    end = SCAN_ONCE(text, pos)[1]
                except NO_VALUE:
                    return self.obj.match(st, pos)  # the scanner says where and what
            role, flags, info = event
            st.events.append((role, pos, end, flags, info))
            return end
        if pos == n:
            return st.need(self, pos, pos) if st.partial else st.fail(pos, "the arguments")
        return (self.string if text[pos] == '"' else self.other).match(st, pos)

    def with_space(self, before: bool, after: bool) -> p.Expr | None:
        # Whitespace before only: whitespace after stays an item of its own.
        if not before or after or self.space:
            return None
        return ByFirstCharacter(self.obj, self.string, self.other, self.follower, space=True)

    def describe(self) -> str:
        return ("space " if self.space else "") + f"arguments({self.obj.describe()})"

    def children(self) -> tuple[p.Expr, ...]:
        return (self.obj, self.string, self.other)


def object_end(text: str, pos: int, follower: str) -> int:
    """Return the end of the JSON object at pos where it runs up to the next follower, with
    whitespace or not between, and the json scanner would read it so (-1 where not so)."""
    at = text.find(follower, pos)
    return checked_end(text[pos:at].rstrip(JSON_SPACE), pos) if at >= 0 else -1


def checked_end(span: str, pos: int) -> int:
    """Return pos + len(span) where span, the text at pos, is one JSON object as the json
    scanner reads it from pos (-1 where not so: the scanner decides).

    An object's text ends at its closing brace: no longer text is one object too, so a text
    the strict check accepts is exactly what the scanner reads from pos. The check accepts
    less than the scanner (no NaN, no lone surrogate), never more, but for what the length
    check leaves out: integers longer than Python converts, nesting deeper than it recurses."""
    size = len(span)
    if span[-1:] != "}" or size > MIN_DIGITS_LIMIT and size > (
            sys.get_int_max_str_digits() or size):
        return -1
    try:
        # Nested near the recursion limit, the scanner fails a level or two before the check
        # does: the check reads the object inside HEADROOM arrays, so it fails first.
        CHECK_JSON(f"{OPEN_HEADROOM}{span}{CLOSE_HEADROOM}")
    except (DecodeError, UnicodeError, RecursionError):
        return -1  # not one strict object: the scanner decides
    return pos + size


def decoded_capture(obj: p.Expr) -> tuple[p.Role, int, Any] | None:
    """Return (role, flags, info) when obj captures one strict JSON value (None otherwise)."""
    if isinstance(obj, Capture) and type(obj.item) is JsonValue and not obj.item.python:
        return obj.role, obj.flags, obj.info
    return None


def value_opening(obj: p.Expr) -> tuple[p.Role, int, Any, bool] | None:
    """Return (role, flags, info, python) when obj captures one JSON value of either flavour
    (None otherwise)."""
    if isinstance(obj, Capture) and type(obj.item) is JsonValue:
        return obj.role, obj.flags, obj.info, obj.item.python
    return None


def holds_object(quoted: str) -> bool:
    """Tell whether a JSON string's text is a JSON object."""
    try:
        inner = json.loads(quoted)
        return isinstance(inner, str) and isinstance(json.loads(inner), dict)
    except ValueError:
        return False


def arguments_value(python: bool, follower: str = "") -> p.Expr:
    """Match the arguments: an object, an object in a string (decoded, noted), or another
    value (dropped for `{}`, noted). follower: the marker written after them, if any."""
    kind, expected = NOT_OBJECT
    in_string = p.noted(p.tool_args(ObjectInString()), kind, "accepted", expected)
    value = p.json_value(python)
    other = p.noted(value, kind, "dropped", expected)
    return ByFirstCharacter(p.tool_args(value), p.choice(in_string, other), other, follower)
