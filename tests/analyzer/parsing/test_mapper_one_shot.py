"""to_message maps a JSON call's plain events (opening, id, name, arguments, closing) itself and
sends every other event to its handler: it must build the message the handlers build alone
(MessageBuilder.apply_all), for plain calls and for the events it must leave to the handlers
(a broken call, a partial name or id, an id with a namespace put back, python or quoted
arguments, tagged arguments, content between calls, events before any opening)."""

from __future__ import annotations

import itertools

from analyzer.parsing.mapper import IdInsert, MessageBuilder, to_message
from analyzer.parsing.recovery import BROKEN
from analyzer.peg import ValueType
from analyzer.peg.result import ParseResult
from analyzer.peg.roles import PARTIAL, PYTHON, QUOTED, Role
from analyzer.peg.state import Event

TEXT = ('Hi "f" "g\\u0068" "id-1" "i\\"d" {"a": 1} {\'b\': True} "{\\"c\\": 2}" x 5 '
        "<arg> tail")


def span(piece: str, nth: int = 0) -> tuple[int, int]:
    """The span of the nth occurrence of piece in TEXT."""
    at = -1
    for _ in range(nth + 1):
        at = TEXT.index(piece, at + 1)
    return at, at + len(piece)


def event(role: Role, piece: str, flags: int = 0, info: object = None) -> Event:
    start, end = span(piece) if piece else (0, 0)
    return (role, start, end, flags, info)


OPEN, CLOSE = event(Role.TOOL_OPEN, ""), event(Role.TOOL_CLOSE, "")
PIECES = {
    "content": [event(Role.CONTENT, "Hi"), event(Role.CONTENT, "tail")],  # apart after a call
    "reasoning": [event(Role.REASONING, "x ")],
    "name": [event(Role.TOOL_NAME, "f"), event(Role.TOOL_NAME, '"f"', QUOTED),
             event(Role.TOOL_NAME, '"g\\u0068"', QUOTED), event(Role.TOOL_NAME, "f", PARTIAL)],
    "id": [event(Role.CALL_ID, '"id-1"', QUOTED), event(Role.CALL_ID, '"i\\"d"', QUOTED),
           event(Role.CALL_ID, "5"), event(Role.CALL_ID, "5", PARTIAL),
           event(Role.CALL_ID, '"id-1"', QUOTED, IdInsert(1, "ns:"))],
    "args": [event(Role.TOOL_ARGS, '{"a": 1}'), event(Role.TOOL_ARGS, "{'b': True}", PYTHON),
             event(Role.TOOL_ARGS, '"{\\"c\\": 2}"', QUOTED),
             event(Role.TOOL_ARGS, '{"a"', PARTIAL),
             event(Role.ARG_NAME, "<arg>"), event(Role.ARG_STRING_VALUE, "x ")],
    "close": [CLOSE, event(Role.TOOL_CLOSE, "", 0, BROKEN)],
}


def by_handlers(events: list[Event]) -> object:
    builder = MessageBuilder()
    builder.apply_all(events, TEXT)
    return builder.message()


def calls() -> list[list[Event]]:
    """Event lists: a call of each mix of id, name, arguments and closing (or none of one),
    after content or not, twice, and one with its events out of order."""
    found = []
    for name, ident, args, close in itertools.product(
            [None, *PIECES["name"]], [None, *PIECES["id"]], [None, *PIECES["args"]],
            PIECES["close"]):
        call = [OPEN, *(e for e in (ident, name, args) if e is not None), close]
        found.append(call)
        found.append(PIECES["content"][:1] + call + PIECES["reasoning"] + call
                     + PIECES["content"][1:])
        found.append([e for e in call if e is not OPEN])  # no opening: the handlers start one
        # Right after another call (closed whole or broken), without an opening; the name
        # twice (a second name starts a new call).
        for before in ([OPEN, PIECES["name"][0], close], [OPEN, close], [OPEN, *PIECES["id"][:1]]):
            found.append(before + call[1:])
        if name is not None:
            found.append([*call[:-1], name, *call[-1:]])
    return found


def test_one_shot_mapping_builds_what_the_handlers_build() -> None:
    cases = calls()
    assert len(cases) > 2000
    for events in cases:  # one test: ~3,000 small cases, each a few microseconds
        assert to_message(ParseResult.of(TEXT, tuple(events), True)) == by_handlers(events), \
            events


class Dialect:
    """A JSON dialect's info on a value (what QuotedDialect and its kin give the mapper)."""

    @staticmethod
    def to_json(text: str) -> str:
        return '"' + text.strip() + '"' if text.strip() else ""


TYPED = ValueType.of({"type": "integer"})
ARGUMENTS = [
    event(Role.ARG_NAME, "<arg>"), event(Role.ARG_NAME, "f", PARTIAL),
    event(Role.ARG_STRING_VALUE, "x ", 0, ValueType.of({"type": "string"})),
    event(Role.ARG_STRING_VALUE, "x ", 0, ValueType.of(None)),
    event(Role.ARG_STRING_VALUE, "5", 0, TYPED), event(Role.ARG_STRING_VALUE, "5", PARTIAL, TYPED),
    event(Role.ARG_STRING_VALUE, "x ", 0, {"type": "string"}),
    event(Role.ARG_STRING_VALUE, "x ", PARTIAL, ValueType.of(None)),
    event(Role.ARG_JSON_VALUE, '{"a": 1}'), event(Role.ARG_JSON_VALUE, "x ", 0, Dialect()),
    event(Role.ARG_JSON_VALUE, "", 0, Dialect()),
    event(Role.ARG_JSON_VALUE, "x ", PARTIAL, Dialect()),
    event(Role.ARG_JSON_VALUE, "{'b': True}", PYTHON),
]


def test_one_shot_mapping_of_tagged_arguments_builds_what_the_handlers_build() -> None:
    # Every pair and triple of argument events (names, text and typed values, JSON and
    # dialect values, partial ones), in a call, without an opening, and after a closed call.
    cases = 0
    for size in (1, 2, 3):
        for arguments in itertools.product(ARGUMENTS, repeat=size):
            for events in ([OPEN, PIECES["name"][0], *arguments, CLOSE], [*arguments, CLOSE],
                           [OPEN, CLOSE, *arguments], [OPEN, *arguments]):
                cases += 1
                assert to_message(ParseResult.of(TEXT, tuple(events), True)) == by_handlers(
                    events), events
    assert cases > 9000


EMPTY_CONTENT = (Role.CONTENT, 4, 4, 0, None)


def test_content_anywhere_in_a_call_maps_as_the_handlers_map_it() -> None:
    # to_message maps content itself and keeps the open call across it (content touches no
    # call), and skips an empty one: content, empty or not, at every place of every call.
    cases = 0
    for call in calls()[::7]:
        for at in range(len(call) + 1):
            for content in (EMPTY_CONTENT, *PIECES["content"]):
                events = [*call[:at], content, *call[at:]]
                cases += 1
                assert to_message(ParseResult.of(TEXT, tuple(events), True)) == by_handlers(
                    events), events
    assert cases > 2000
