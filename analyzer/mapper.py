"""Map parse captures to an OpenAI message, incrementally.

The same builder serves one-shot parses and streams: each capture yields message fragments
(content text, a call's header, argument text) that only ever append, so the text a stream
has sent is always a prefix of the final message. Tagged argument values are typed by their
schema here; python-dict values are rewritten as JSON once they are complete.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from analyzer.message import Message, ToolCall
from analyzer.peg import Captured, ParseResult, Role, decode_json, normalize_python_json

INTEGER = re.compile(r"-?[0-9]+")
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
BOOLEANS = {"true": True, "True": True, "false": False, "False": False}
NULLS = ("null", "None")


class Fragment(NamedTuple):
    """A piece of message: kind is content, reasoning, tool (a call's header), id or args."""

    kind: str
    text: str = ""
    call: int = 0  # index of the tool call in the message
    name: str = ""
    id: str = ""


@dataclass
class CallDraft:
    """A tool call being built."""

    name: str | None = None
    id: str = ""
    args: list[str] = field(default_factory=list)
    announced: bool = False
    arg_count: int = 0
    buffered: list[str] = field(default_factory=list)  # a value kept until it is complete
    closed: bool = False


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


def typed_value(text: str, type_name: str) -> tuple[bool, Any]:
    """Read text as a value of one JSON type; return (ok, value)."""
    if type_name == "integer" and INTEGER.fullmatch(text):
        return True, int(text)
    if type_name == "number" and NUMBER.fullmatch(text):
        return True, json.loads(text)
    if type_name == "boolean" and text in BOOLEANS:
        return True, BOOLEANS[text]
    if type_name == "null" and text in NULLS:
        return True, None
    if type_name in ("array", "object"):
        for python in (False, True):
            try:
                value = decode_json(text, python)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, list if type_name == "array" else dict):
                return True, value
    return False, None


def type_tagged_value(text: str, schema: Mapping[str, Any] | None) -> str:
    """Return the JSON text of a tagged value typed by its schema (text stays a string
    when it fits none of the schema's types: data is never dropped)."""
    stripped = text.strip()
    for type_name in declared_types(schema):
        if type_name == "string":
            break
        ok, value = typed_value(stripped, type_name)
        if ok:
            return json.dumps(value, ensure_ascii=False)
    return json.dumps(text, ensure_ascii=False)


def escaped(text: str) -> str:
    """Escape text for the inside of a JSON string (char by char, so prefixes stay prefixes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class MessageBuilder:
    """Fold captures, in input order, into a message; each step returns its fragments."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[CallDraft] = []

    def apply(self, capture: Captured) -> list[Fragment]:
        """Add one capture; return the fragments it adds to the message."""
        handler = HANDLERS.get(capture.role)
        return handler(self, capture) if handler else []

    def apply_all(self, captures: tuple[Captured, ...] | list[Captured]) -> list[Fragment]:
        """Add captures in order; return all their fragments."""
        return [fragment for capture in captures for fragment in self.apply(capture)]

    def message(self) -> Message:
        """Return the message built so far."""
        calls = tuple(
            ToolCall(name=call.name or "", arguments="".join(call.args), id=call.id)
            for call in self.calls
        )
        return Message(
            content="".join(self.content),
            reasoning_content="".join(self.reasoning),
            tool_calls=calls,
        )

    def _text(self, capture: Captured) -> list[Fragment]:
        """Append content or reasoning text."""
        if not capture.text:
            return []
        is_content = capture.role == Role.CONTENT
        (self.content if is_content else self.reasoning).append(capture.text)
        return [Fragment("content" if is_content else "reasoning", capture.text)]

    def _open(self, capture: Captured) -> list[Fragment]:
        """Start a tool call."""
        self.calls.append(CallDraft())
        return []

    def _close(self, capture: Captured) -> list[Fragment]:
        """Finish the current tool call (closing tagged arguments)."""
        call = self._call()
        call.closed = True
        if call.arg_count:
            return self._args(call, "}")
        return [] if call.args else self._args(call, "{}")

    def _name(self, capture: Captured) -> list[Fragment]:
        """Name the current call and announce it with any arguments seen before the name."""
        if capture.partial:
            return []
        call = self._call(fresh=True)
        call.name = json.loads(capture.text) if capture.quoted else capture.text
        call.announced = True
        index = len(self.calls) - 1
        header = Fragment("tool", call=index, name=call.name or "", id=call.id)
        early = "".join(call.args)
        return [header, Fragment("args", early, index)] if early else [header]

    def _id(self, capture: Captured) -> list[Fragment]:
        """Set the current call's id."""
        if capture.partial:
            return []
        call = self._call()
        call.id = json.loads(capture.text) if capture.quoted else capture.text
        if not call.announced:
            return []
        return [Fragment("id", call=len(self.calls) - 1, id=call.id)]

    def _json_args(self, capture: Captured) -> list[Fragment]:
        """Add JSON argument text (python-flavoured text waits until complete)."""
        call = self._call()
        if not capture.python:
            return self._args(call, capture.text)
        call.buffered.append(capture.text)
        if capture.partial:
            return []
        text, call.buffered = "".join(call.buffered), []
        return self._args(call, normalize_python_json(text))

    def _arg_name(self, capture: Captured) -> list[Fragment]:
        """Open one tagged argument in the arguments object."""
        if capture.partial:
            return []
        call = self._call()
        separator = ", " if call.arg_count else "{"
        call.arg_count += 1
        return self._args(call, separator + json.dumps(capture.text, ensure_ascii=False) + ": ")

    def _arg_string(self, capture: Captured) -> list[Fragment]:
        """Add a raw tagged value: streamed as a JSON string, or typed once complete."""
        call = self._call()
        if not is_string_schema(capture.info):
            call.buffered.append(capture.text)
            if capture.partial:
                return []
            text, call.buffered = "".join(call.buffered), []
            return self._args(call, type_tagged_value(text, capture.info))
        opening = "" if capture.continued else '"'
        closing = "" if capture.partial else '"'
        return self._args(call, opening + escaped(capture.text) + closing)

    def _call(self, fresh: bool = False) -> CallDraft:
        """Return the call being built (a name after a named call starts a new one)."""
        if not self.calls or self.calls[-1].closed or (fresh and self.calls[-1].name):
            self.calls.append(CallDraft())
        return self.calls[-1]

    def _args(self, call: CallDraft, text: str) -> list[Fragment]:
        """Append argument text; it is sent once the call has been announced."""
        if not text:
            return []
        call.args.append(text)
        if not call.announced:
            return []
        return [Fragment("args", text, len(self.calls) - 1)]


HANDLERS = {
    Role.CONTENT: MessageBuilder._text,
    Role.REASONING: MessageBuilder._text,
    Role.TOOL_OPEN: MessageBuilder._open,
    Role.TOOL_CLOSE: MessageBuilder._close,
    Role.TOOL_NAME: MessageBuilder._name,
    Role.CALL_ID: MessageBuilder._id,
    Role.TOOL_ARGS: MessageBuilder._json_args,
    Role.ARG_JSON_VALUE: MessageBuilder._json_args,
    Role.ARG_NAME: MessageBuilder._arg_name,
    Role.ARG_STRING_VALUE: MessageBuilder._arg_string,
}


def to_message(result: ParseResult) -> Message:
    """Map a parse result to an OpenAI message."""
    builder = MessageBuilder()
    builder.apply_all(result.captures)
    return builder.message()
