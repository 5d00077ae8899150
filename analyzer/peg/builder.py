"""Functions that compose grammars: what a generator calls with marker strings and schemas.

Empty markers are welcome: `literal("")` is `eps`, and `until()` drops empty markers, so a
generator can pass analysis fields through without testing each for emptiness.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from analyzer.peg.captures import Capture, ToolCapture, capture_of
from analyzer.peg.diagnostics import KeptAsText
from analyzer.peg.expressions import (
    EPS,
    Commit,
    Expr,
    Not,
    Optional,
    Peek,
    Repeat,
    Rule,
    choice,
    sequence,
)
from analyzer.peg.json_values import JsonString, JsonValue, SchemaValue, ValueType
from analyzer.peg.notes import Note, Noted
from analyzer.peg.roles import Role
from analyzer.peg.scanning import End, Literal, Regex, Rest, Space, Until

seq = sequence
one_of = choice


def literal(text: str) -> Expr:
    """Match text exactly (the empty string matches nothing and always succeeds)."""
    return Literal(text) if text else EPS


def literals(texts: Iterable[str]) -> Expr:
    """Match any one of the given strings (longest first, so prefixes do not shadow)."""
    ordered = sorted(dict.fromkeys(texts), key=len, reverse=True)  # stable: ties keep order
    return choice(*(literal(t) for t in ordered))


def eps() -> Expr:
    """Match the empty string."""
    return EPS


def optional(item: Expr) -> Expr:
    """Match item or nothing."""
    return Optional(item)


def repeat(item: Expr, least: int = 0, most: int | None = None) -> Expr:
    """Match item between least and most times (most=None: no limit)."""
    return Repeat(item, least, most)


def zero_or_more(item: Expr) -> Expr:
    """Match item any number of times."""
    return Repeat(item, 0, None)


def one_or_more(item: Expr) -> Expr:
    """Match item at least once."""
    return Repeat(item, 1, None)


def until(*markers: str) -> Expr:
    """Match up to the first of the markers (or to the end); no markers means rest()."""
    kept = tuple(dict.fromkeys(m for m in markers if m))
    return Until(kept) if kept else Rest()


def rest() -> Expr:
    """Match everything to the end of the input."""
    return Rest()


def space() -> Expr:
    """Match optional whitespace."""
    return Space()


def end() -> Expr:
    """Match the end of the input."""
    return End()


def regex(pattern: str, max_length: int = 64) -> Expr:
    """Match a regular expression (short tokens; max_length bounds the wait in partial mode)."""
    return Regex(pattern, max_length)


def commit() -> Expr:
    """Stop backtracking here: later failures are errors, and streams may commit."""
    return Commit()


def peek(item: Expr) -> Expr:
    """Succeed, consuming nothing, where item matches."""
    return Peek(item)


def not_followed_by(item: Expr) -> Expr:
    """Succeed, consuming nothing, where item does not match."""
    return Not(item)


def kept_as_text(item: Expr, attempt: Expr, progress: bool = False) -> Expr:
    """Match item, text kept as text; where attempt fails at its start, record why (a problem).

    progress=True: only when attempt got somewhere before failing."""
    return KeptAsText(item, attempt, progress)


def noted(item: Expr, kind: str, action: str, expected: str) -> Expr:
    """Match item, text that departs from the template's form; record a deviation over it."""
    return Noted(item, Note(kind, action, expected))


def rule(name: str, body: Expr | None = None) -> Rule:
    """Name an expression (shown by name in dumps and traces); body may be set later."""
    return Rule(name, body)


def json_value(python: bool = False) -> Expr:
    """Match a JSON value; python=True also accepts single quotes and True/False/None."""
    return JsonValue(python)


def json_string() -> Expr:
    """Match a double-quoted JSON string."""
    return JsonString()


def schema_value(schema: Mapping[str, Any], python: bool = False) -> Expr:
    """Match a JSON value of the schema's type (and enum)."""
    return SchemaValue(schema, python)


def json_key(key: str, python: bool = False) -> Expr:
    """Match `"key"` (or `'key'` in the python flavour) then a colon, spaces allowed."""
    quoted = literal(json.dumps(key, ensure_ascii=False))
    if python:
        quoted = choice(quoted, literal(f"'{key}'"))
    return sequence(quoted, Space(), Literal(":"), Space())


def json_member(key: str, value: Expr, python: bool = False) -> Expr:
    """Match one `"key": value` member of a JSON object."""
    return sequence(json_key(key, python), value)


def json_object(*members: Expr) -> Expr:
    """Match `{member, member...}` with the members in this order, spaces allowed."""
    items: list[Expr] = [Literal("{"), Space()]
    for index, member in enumerate(members):
        if index:
            items += [Space(), Literal(","), Space()]
        items.append(member)
    return sequence(*items, Space(), Literal("}"))


def capture(role: Role, item: Expr, info: Any = None) -> Expr:
    """Tag what item matches with a role."""
    return capture_of(role, item, info)


def reasoning(item: Expr) -> Expr:
    """Capture reasoning text."""
    return capture_of(Role.REASONING, item)


def content(item: Expr) -> Expr:
    """Capture content text."""
    return capture_of(Role.CONTENT, item)


def tool(item: Expr) -> Expr:
    """Mark one whole tool call (opens and closes a call in the message)."""
    return ToolCapture(item)


def tool_name(item: Expr) -> Expr:
    """Capture a tool call's function name."""
    return capture_of(Role.TOOL_NAME, item)


def tool_args(item: Expr) -> Expr:
    """Capture a tool call's arguments as one JSON value."""
    return Capture(Role.TOOL_ARGS, item)


def call_id(item: Expr) -> Expr:
    """Capture a tool call's id."""
    return capture_of(Role.CALL_ID, item)


def arg_name(item: Expr) -> Expr:
    """Capture the name of one tagged argument."""
    return capture_of(Role.ARG_NAME, item)


def arg_string_value(item: Expr, schema: Mapping[str, Any] | None = None) -> Expr:
    """Capture a raw tagged argument value; the mapper types it by schema."""
    return Capture(Role.ARG_STRING_VALUE, item, ValueType.of(schema))


def arg_json_value(item: Expr) -> Expr:
    """Capture a tagged argument value written as JSON."""
    return Capture(Role.ARG_JSON_VALUE, item)


def tool_names(tools: Iterable[Mapping[str, Any]]) -> list[str]:
    """Return the function names of OpenAI tool definitions."""
    return [str(t.get("function", t)["name"]) for t in tools]


def tool_parameters(tool_definition: Mapping[str, Any]) -> dict[str, Any]:
    """Return an OpenAI tool definition's parameters schema ({} when absent)."""
    function = tool_definition.get("function", tool_definition)
    return dict(function.get("parameters") or {})
