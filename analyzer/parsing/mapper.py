"""Map parse captures to an OpenAI message, incrementally.

The same builder serves one-shot parses and streams: each capture yields message pieces
(content text, a call's header, argument text) that only ever append, so the text a stream
has sent is always a prefix of the final message. For a stream the builder records each piece
as the delta it sends, joined with the delta before when both add to the same text. Tagged
argument values are typed by their schema here; python-dict values are rewritten as JSON once
they are complete.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

from analyzer.parsing.deltas import (
    Delta,
    ToolCallDelta,
    arguments_delta,
    content_delta,
    header_delta,
    id_delta,
    new_tuple,
    reasoning_delta,
)
from analyzer.parsing.healing import healing
from analyzer.parsing.message import Message, ToolCall
from analyzer.parsing.recovery import BROKEN
from analyzer.peg import ParseResult, Role, ValueType, decode_json, normalize_python_json
from analyzer.peg.roles import CONTINUED, PARTIAL, PYTHON, QUOTED
from analyzer.peg.state import Event

INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# Joins content the model wrote right before and right after a tool call, neither side
# with whitespace: the call stood between them, and glued they would read as one word.
CALL_BREAK = "\n"
BOOLEANS = {"true": "true", "True": "true", "false": "false", "False": "false"}
NULLS = ("null", "None")
# What the last delta recorded adds to, so that the next piece of the same text joins it (a
# call's index for its arguments; NO_JOIN after a call's header or id).
CONTENT, REASONING, NO_JOIN = "content", "reasoning", None
# json.dumps(value, ensure_ascii=False), without building an encoder per value.
JSON_TEXT = json.JSONEncoder(ensure_ascii=False)


@dataclass(frozen=True)
class IdInsert:
    """Text a model left out of a call id (a namespace), put back at its place in the id."""

    at: int
    text: str

    def restored(self, ident: str) -> str:
        """Return the id as the template writes it."""
        return ident[: self.at] + self.text + ident[self.at :]


@dataclass(slots=True, init=False)
class CallDraft:
    """A tool call being built."""

    name: str | None
    id: str
    args: list[str]
    announced: bool
    arg_count: int
    buffered: list[str]  # a value kept until it is complete
    held_json: Any  # what converts a held dialect value (a Python literal) to JSON
    closed: bool

    def __init__(self) -> None:
        # Written out: the generated __init__ (a parameter per field, `list()` per factory)
        # costs a third more, and every tool call of every parse builds one.
        self.name = None
        self.id = ""
        self.args = []
        self.announced = False
        self.arg_count = 0
        self.buffered = []
        self.held_json = None
        self.closed = False


def typed_json(text: str, type_name: str) -> str | None:
    """Return text as the JSON text of one JSON type, or None if it is not of that type."""
    if type_name in ("integer", "number"):
        return text if (INTEGER if type_name == "integer" else NUMBER).fullmatch(text) else None
    if type_name == "boolean":
        return BOOLEANS.get(text)
    if type_name == "null":
        return "null" if text in NULLS else None
    if type_name not in ("array", "object"):
        return None
    wanted = list if type_name == "array" else dict
    try:
        return text if isinstance(json.loads(text), wanted) else None
    except ValueError:
        pass
    try:
        value = decode_json(text, python=True)
    except (ValueError, SyntaxError):
        return None
    return JSON_TEXT.encode(value) if isinstance(value, wanted) else None


def type_tagged_value(text: str, types: tuple[str, ...]) -> str:
    """Return the JSON text of a tagged value typed by its schema's types (text stays a
    string when it fits none of them: data is never dropped)."""
    stripped = text.strip()
    for type_name in types:
        if type_name == "string":
            break
        typed = typed_json(stripped, type_name)
        if typed is not None:
            return typed
    return encode_basestring(text)


# What MessageBuilder.text_sink gives: (function, pieces, index, escaped). For text sent as
# argument text as it comes, the call's argument pieces, its index, and whether the text is
# escaped as JSON string text (a value's) or sent as it is (JSON arguments): the stream
# appends and sends it itself (a Python call less at each chunk of a long value; the
# function is then None for a value's text, whose closure would cost more than its
# mapping). Else the function maps the text and pieces is None.
TextSink = tuple[Callable[[str], Delta | None] | None, list[str] | None, int, bool]


class MessageBuilder:
    """Fold captures, in input order, into a message; with record=True also list the
    deltas each step adds (what a stream sends: `sent`, which the stream empties)."""

    def __init__(self, record: bool = False) -> None:
        self.content: list[str] = []
        # Content text before a call and after it must not run together ("Hi" + "Done"):
        # open_end says the content so far ends in a word, split that a call came since,
        # gap holds the whitespace after a call until text follows (none follows: dropped).
        self.open_end = False
        self.split = False
        self.gap = ""
        self.reasoning: list[str] = []
        self.calls: list[CallDraft] = []
        self.sent: list[Delta] | None = [] if record else None
        # What the last delta in `sent` adds to (CONTENT, REASONING, a call's index, NO_JOIN);
        # read only while `sent` holds it.
        self.joins: Any = NO_JOIN

    def apply(self, event: Event, text: str) -> None:
        """Add one capture event whose positions index text."""
        role, start, end, flags, info = event
        handler = HANDLERS.get(role)
        if handler is not None:
            handler(self, text[start:end], flags, info)

    def apply_all(self, events: Iterable[Event], text: str) -> None:
        """Add capture events in order (apply's body inlined: a parse maps thousands)."""
        handlers = HANDLERS
        for role, start, end, flags, info in events:
            handler = handlers.get(role)
            if handler is not None:
                handler(self, text[start:end], flags, info)

    def message(self) -> Message:
        """Return the message built so far."""
        # One piece of arguments per call is the usual case (a JSON body, a closed call): read
        # as joined() would leave it, one frame less per call; the calls built in one frame.
        calls = ToolCall.all_of([
            (call.name or "", call.args[0] if len(call.args) == 1 else joined(call.args), call.id)
            for call in self.calls
        ])
        return Message.of(joined(self.content), joined(self.reasoning), calls)

    def text_sink(self, role: Role, flags: int, info: Any) -> TextSink | None:
        """For a stream stretching one capture over text after text: a function that adds the
        next text as apply() would and returns the delta that sends it (None when none is
        sent yet), with what TextSink says of argument text. None when that capture needs
        apply() (a value typed once complete, content right after a call). Valid while no
        other event comes between."""
        if role is ARG_STRING_VALUE and flags & STREAMED == STREAMED:
            calls = self.calls
            if not calls or calls[-1].closed:
                return None
            call = calls[-1]
            if not (info if isinstance(info, ValueType) else ValueType.of(info)).text_only:
                # typed once complete: held until then, unsent (as _arg_string keeps it; the
                # list's own append: no Python frame per chunk)
                return call.buffered.append, None, 0, False
            args = call.args
            if call.announced and self.sent is not None:  # the stream escapes and sends it
                return None, args, len(calls) - 1, True

            def add_unsent_text(text: str) -> None:
                args.append(encode_basestring(text)[1:-1])

            return add_unsent_text, None, 0, True
        if role is TOOL_ARGS or role is ARG_JSON_VALUE:
            return self._json_sink(flags, info)
        if role is REASONING_TEXT:
            return self._reasoning_sink, None, 0, False
        if role is CONTENT_TEXT and not self.split:
            return self._content_sink, None, 0, False
        return None

    def _json_sink(self, flags: int, info: Any) -> TextSink | None:
        """The text sink of JSON argument text sent as it comes (as _json_args adds it)."""
        if flags & (PYTHON | QUOTED) or getattr(info, "to_json", None) is not None:
            return None  # converted once complete
        if not self.calls or self.calls[-1].closed:
            return None
        call = self.calls[-1]
        args, index = call.args, len(self.calls) - 1
        sent = call.announced and self.sent is not None

        def add_json_text(text: str) -> Delta | None:
            args.append(text)
            if not (sent and text):
                return None
            return new_tuple(Delta, (None, None, (new_tuple(
                ToolCallDelta, (index, None, None, text)),)))

        return add_json_text, args if sent else None, index, False

    def _reasoning_sink(self, text: str) -> Delta | None:
        self.reasoning.append(text)
        return reasoning_delta(text) if text else None

    def _content_sink(self, text: str) -> Delta | None:
        self.open_end = not text[-1].isspace()
        self.content.append(text)
        return content_delta(text)

    def _content(self, text: str, flags: int, info: Any) -> None:
        """Append content text (after a call, apart from the text before it)."""
        if not text:
            return
        if self.split:
            if text.isspace():
                self.gap += text
                return
            text, self.gap = self.gap + text, ""
            if self.open_end and not text[0].isspace():
                text = CALL_BREAK + text
        self.split = False
        self.open_end = not text[-1].isspace()
        self.content.append(text)
        sent = self.sent
        if sent is not None:
            if sent and self.joins is CONTENT:
                sent[-1] = content_delta((sent[-1][0] or "") + text)
            else:
                sent.append(content_delta(text))
                self.joins = CONTENT

    def _reasoning(self, text: str, flags: int, info: Any) -> None:
        """Append reasoning text."""
        self.reasoning.append(text)
        sent = self.sent
        if sent is not None and text:
            if sent and self.joins is REASONING:
                sent[-1] = reasoning_delta((sent[-1][1] or "") + text)
            else:
                sent.append(reasoning_delta(text))
                self.joins = REASONING

    def _open(self, text: str, flags: int, info: Any) -> None:
        """Start a tool call (whitespace between two calls is no content)."""
        self.calls.append(CallDraft())
        self.gap = ""

    def _close(self, text: str, flags: int, info: Any) -> None:
        """Finish the current tool call (closing tagged arguments)."""
        if info == BROKEN:
            self._close_broken()
            return
        calls = self.calls  # _call() inlined: every call closes
        call = calls[-1] if calls and not calls[-1].closed else self._call()
        call.closed = True
        self.split = True
        closing = "}" if call.arg_count else "" if call.args else "{}"
        if self.sent is None:  # one-shot: _args inlined; message() joins the pieces once
            if closing:
                call.args.append(closing)
            return
        if closing:
            self._args(call, closing)
        joined(call.args)  # a streamed call holds one piece per chunk: keep one string

    def _close_broken(self) -> None:
        """Close a call the output broke off, its arguments healed into a JSON object; an
        unfinished Python-literal value is converted as far as it goes and kept in the
        arguments (as cut-off JSON text is); another held value (a typed one) is kept as
        content after the call, as written."""
        if not self.calls or self.calls[-1].closed:
            return
        call = self.calls[-1]
        if call.name is None:  # broken before its name: nothing of it was sent
            self.calls.pop()
            return
        held, call.buffered = joined(call.buffered), []
        if held and call.held_json is not None:
            # A dialect value cut off is converted as far as it goes (as JSON text is).
            self._args(call, call.held_json(held))
            held = ""
        call.closed = True
        self.split = True
        self._args(call, healing(joined(call.args)))
        joined(call.args)
        self._content(held, 0, None)

    def open_call_events(self) -> list[Event]:
        """Stand-in events for the call left open, if any (named or not), for recovery."""
        if not self.calls or self.calls[-1].closed:
            return []
        named = self.calls[-1].name is not None
        opened: Event = (Role.TOOL_OPEN, 0, 0, 0, None)
        return [opened, (Role.TOOL_NAME, 0, 0, 0, None)] if named else [opened]

    def _name(self, text: str, flags: int, info: Any) -> None:
        """Name the current call and announce it with any arguments seen before the name."""
        if flags & PARTIAL:
            return
        calls = self.calls  # _call(fresh=True) inlined: every call is named
        last = calls[-1] if calls else None
        call = last if last is not None and not last.closed and not last.name else self._call(
            fresh=True)
        call.name = string_value(text) if flags & QUOTED else text
        call.announced = True
        sent = self.sent
        if sent is not None:
            index = len(self.calls) - 1
            sent.append(header_delta(index, call.id, call.name or ""))
            self.joins = NO_JOIN
            if call.args:
                sent.append(arguments_delta(index, "".join(call.args)))
                self.joins = index

    def _id(self, text: str, flags: int, info: Any) -> None:
        """Set the current call's id."""
        if flags & PARTIAL:
            return
        calls = self.calls  # _call() inlined for a one-shot parse: one per call
        call = calls[-1] if calls and not calls[-1].closed else self._call()
        call.id = string_value(text) if flags & QUOTED else text
        if isinstance(info, IdInsert):
            call.id = info.restored(call.id)
        sent = self.sent
        if call.announced and sent is not None:
            sent.append(id_delta(len(self.calls) - 1, call.id))
            self.joins = NO_JOIN

    def _json_args(self, text: str, flags: int, info: Any) -> None:
        """Add JSON argument text (python-flavoured or string-wrapped text waits until complete)."""
        calls = self.calls  # _call() and _args() inlined for a one-shot parse: one per call
        call = calls[-1] if calls and not calls[-1].closed else self._call()
        # A value in another JSON dialect carries it as info: converted once complete (no
        # info, the usual case, is asked nothing: a missing attribute raises inside getattr).
        to_json = None if info is None else getattr(info, "to_json", None)
        if to_json is None and not flags & (PYTHON | QUOTED):
            if self.sent is not None:
                self._args(call, text)
            elif text:
                call.args.append(text)
            return
        call.buffered.append(text)
        call.held_json = to_json
        if not flags & PARTIAL:
            whole, call.buffered = "".join(call.buffered), []
            converted = to_json(whole) if to_json else self._decoded_args(whole, flags)
            if self.sent is None:  # _args inlined for a one-shot parse
                if converted:
                    call.args.append(converted)
            else:
                self._args(call, converted)

    @staticmethod
    def _decoded_args(text: str, flags: int) -> str:
        """Return python-flavoured text as JSON, or the JSON text inside a JSON string."""
        if flags & PYTHON:
            return normalize_python_json(text)
        inner = json.loads(text)
        return inner if isinstance(inner, str) else text

    def _arg_name(self, text: str, flags: int, info: Any) -> None:
        """Open one tagged argument in the arguments object."""
        if flags & PARTIAL:
            return
        calls = self.calls  # _call() and _args() inlined for a one-shot parse: one per argument
        call = calls[-1] if calls and not calls[-1].closed else self._call()
        piece = (", " if call.arg_count else "{") + json_key(text)
        call.arg_count += 1
        call.args.append(piece)
        sent = self.sent
        if call.announced and sent is not None:  # _args inlined: a stream's usual event
            index = len(calls) - 1
            if sent and self.joins == index:
                piece = (sent[-1][2][0][3] or "") + piece
                sent[-1] = new_tuple(Delta, (None, None, (new_tuple(
                    ToolCallDelta, (index, None, None, piece)),)))
            else:
                sent.append(new_tuple(Delta, (None, None, (new_tuple(
                    ToolCallDelta, (index, None, None, piece)),))))
                self.joins = index

    def _arg_string(self, text: str, flags: int, info: Any) -> None:
        """Add a raw tagged value: streamed as a JSON string, or typed once complete."""
        calls = self.calls
        call = calls[-1] if calls and not calls[-1].closed else self._call()
        # (type(), not isinstance(): a call this cheap is specialized on 3.11)
        value_type = info if type(info) is ValueType else ValueType.of(info)
        if not value_type.text_only:
            call.buffered.append(text)
            if not flags & PARTIAL:
                whole, call.buffered = "".join(call.buffered), []
                self._args(call, type_tagged_value(whole, value_type.types))
            return
        if not flags & (CONTINUED | PARTIAL):  # a whole value: one JSON string
            if self.sent is None:
                call.args.append(encode_basestring(text))
            else:
                self._args(call, encode_basestring(text))
            return
        # The JSON string, without its opening quote when the value began in an earlier
        # piece, nor its closing one while the value goes on (prefixes stay prefixes).
        piece = encode_basestring(text)[1 if flags & CONTINUED else 0 :
                                        -1 if flags & PARTIAL else None]
        if not piece:
            return
        call.args.append(piece)  # _args inlined: a stream's usual event (a frame fewer)
        sent = self.sent
        if call.announced and sent is not None:
            index = len(calls) - 1
            if sent and self.joins == index:
                piece = (sent[-1][2][0][3] or "") + piece
                sent[-1] = new_tuple(Delta, (None, None, (new_tuple(
                    ToolCallDelta, (index, None, None, piece)),)))
            else:
                sent.append(new_tuple(Delta, (None, None, (new_tuple(
                    ToolCallDelta, (index, None, None, piece)),))))
                self.joins = index

    def _call(self, fresh: bool = False) -> CallDraft:
        """Return the call being built (a name after a named call starts a new one)."""
        calls = self.calls
        if calls:
            call = calls[-1]
            if not call.closed and not (fresh and call.name):
                return call
        call = CallDraft()
        calls.append(call)
        return call

    def _args(self, call: CallDraft, text: str) -> None:
        """Append argument text; it is sent once the call has been announced."""
        if not text:
            return
        call.args.append(text)
        sent = self.sent
        if call.announced and sent is not None:  # arguments_delta inlined: the hot path
            index = len(self.calls) - 1
            if sent and self.joins == index:
                text = (sent[-1][2][0][3] or "") + text
                sent[-1] = new_tuple(Delta, (None, None, (new_tuple(
                    ToolCallDelta, (index, None, None, text)),)))
            else:
                sent.append(new_tuple(Delta, (None, None, (new_tuple(
                    ToolCallDelta, (index, None, None, text)),))))
                self.joins = index


def string_value(quoted: str) -> str:
    """Return the value of a complete JSON string as a capture matched it (`json-string`: no
    raw control character, a quote only escaped): the text between its quotes when nothing
    in it is escaped, else what json decodes."""
    return quoted[1:-1] if "\\" not in quoted else json.loads(quoted)


def joined(pieces: list[str]) -> str:
    """Join pieces and keep the result as the only piece (a stream asks again and again)."""
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


@lru_cache(maxsize=1024)
def json_key(name: str) -> str:
    """Return `"name": ` for an arguments object."""
    return encode_basestring(name) + ": "


HANDLERS = {
    Role.CONTENT: MessageBuilder._content,
    Role.REASONING: MessageBuilder._reasoning,
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
    """Map a parse result to an OpenAI message.

    MessageBuilder.apply_all with the one-shot steps of a JSON call's plain events inlined
    (its opening, id, name, arguments and closing: what every call of a JSON format is made
    of, five handler calls per call) and of a tagged argument's (its name, a text value, a
    JSON or dialect value: two handler calls per argument); any other event goes to its
    handler, as there."""
    builder = MessageBuilder()
    text, calls, handlers = result.text, builder.calls, HANDLERS
    call: CallDraft | None = None  # the open last call, while only these steps touched it
    for role, start, end, flags, info in result.events:
        if role in WHOLE_STEPS:
            if role is TOOL_OPEN:  # _open
                call = CallDraft()
                calls.append(call)
                builder.gap = ""
                continue
            if info is None and not flags & NOT_QUOTED:
                if role is TOOL_ARGS:
                    if not flags:  # _json_args of plain JSON text
                        if call is None:
                            call = calls[-1] if calls and not calls[-1].closed else builder._call()
                        if end > start:
                            call.args.append(text[start:end])
                        continue
                elif role is TOOL_NAME:  # _name of a whole name
                    if call is None or call.name:  # a name after a named call: a new one
                        call = builder._call(fresh=True)
                    value = text[start:end]
                    if flags:  # string_value inlined: a frame less per call
                        value = value[1:-1] if "\\" not in value else json.loads(value)
                    call.name = value
                    call.announced = True
                    continue
                elif role is CALL_ID:  # _id of a whole id
                    if call is None:
                        call = calls[-1] if calls and not calls[-1].closed else builder._call()
                    value = text[start:end]
                    if flags:  # string_value inlined
                        value = value[1:-1] if "\\" not in value else json.loads(value)
                    call.id = value
                    continue
                else:  # _close of a call read whole (not broken)
                    if call is None:
                        call = calls[-1] if calls and not calls[-1].closed else builder._call()
                    call.closed = True
                    builder.split = True
                    if not call.arg_count:
                        if not call.args:
                            call.args.append("{}")
                    else:
                        call.args.append("}")
                    call = None
                    continue
        elif role in ARGUMENT_STEPS and not flags:
            if call is None:
                call = calls[-1] if calls and not calls[-1].closed else builder._call()
            if role is ARG_NAME:  # _arg_name
                call.args.append((", " if call.arg_count else "{") + json_key(text[start:end]))
                call.arg_count += 1
                continue
            if role is ARG_STRING_VALUE:  # _arg_string of a whole text value
                if type(info) is ValueType and info.text_only:
                    call.args.append(encode_basestring(text[start:end]))
                    continue
            elif not call.buffered:  # _json_args of a whole value, plain or converted
                to_json = None if info is None else getattr(info, "to_json", None)
                value = text[start:end] if to_json is None else to_json(text[start:end])
                if value:
                    call.args.append(value)
                continue
        elif role is CONTENT_TEXT:  # _content: it touches no call, the open one stays
            if end > start:  # an empty text adds nothing (a call alone has one each side)
                builder._content(text[start:end], flags, info)
            continue
        handler = handlers.get(role)
        if handler is not None:
            handler(builder, text[start:end], flags, info)
            call = None  # a handler may have opened, closed or dropped a call
    return builder.message()


TOOL_OPEN, TOOL_CLOSE, TOOL_NAME = Role.TOOL_OPEN, Role.TOOL_CLOSE, Role.TOOL_NAME
CALL_ID, TOOL_ARGS = Role.CALL_ID, Role.TOOL_ARGS
# Read by text_sink (a stream asks at each value it stretches): a module name costs ~10 ns, a
# member read through the enum's class ~150 ns on 3.11 (EnumType.__getattr__).
ARG_NAME, ARG_STRING_VALUE = Role.ARG_NAME, Role.ARG_STRING_VALUE
ARG_JSON_VALUE = Role.ARG_JSON_VALUE
CONTENT_TEXT, REASONING_TEXT = Role.CONTENT, Role.REASONING
NOT_QUOTED = ~QUOTED  # the flags a one-shot step leaves to its handler
# The roles to_message maps itself (other events, content among them, skip its steps at once).
WHOLE_STEPS = frozenset((TOOL_OPEN, TOOL_ARGS, TOOL_NAME, CALL_ID, TOOL_CLOSE))
# The flags of a value's text that goes on past this chunk, and began in an earlier one.
STREAMED = CONTINUED | PARTIAL
# A tagged argument's events, mapped in to_message's loop when they carry no flags.
ARGUMENT_STEPS = frozenset((ARG_NAME, ARG_STRING_VALUE, ARG_JSON_VALUE))
