"""Recipient routing: an output made of messages, each a header then a body.

    [message_start] HEADER header_end BODY [terminator]   (repeated)

The header names where the body goes (GPT-OSS `<|channel|>analysis`, ` to=functions.f`,
Functionary v3.2 `>>>f`): to the reasoning, to the content, to a tool call (the body is the
call's arguments), or nowhere (a built-in tool the request did not declare). Which one is
known only once the header is complete, so one expression reads the header and then runs
the grammar of its route.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from analyzer import peg as p
from analyzer.peg.state import MatchState

MAX_HEADER = 256  # a header longer than this is text, not a header


class Route(StrEnum):
    REASONING = "reasoning"
    CONTENT = "content"
    CALL = "call"
    TEXT = "text"  # content, header and all (a recipient the request does not know)
    DROP = "drop"


@dataclass(frozen=True)
class Destination:
    """Where a header sends its body; for a call, the function and where its name sits."""

    route: Route
    name: str = ""
    name_at: int = -1  # offset of the function name in the header


@dataclass(frozen=True)
class Routing:
    """The markup of a routed format and how to read its headers."""

    message_start: str  # before every message but the first (`<|start|>assistant`, `>>>`)
    header_end: str  # `<|message|>`, or a newline
    terminators: tuple[str, ...]  # what may end a body
    route: Callable[[str], Destination]  # header text -> destination
    call_body: Callable[[str], p.Expr]  # function name -> grammar of the call's body
    extract_reasoning: bool = True


class RoutedMessage(p.Expr):
    """Read one message's header, then match the grammar of its destination."""

    __slots__ = ("routing", "grammars")

    def __init__(self, routing: Routing) -> None:
        self.routing = routing
        self.grammars: dict[str, p.Expr] = {}  # per header text: headers repeat

    def match(self, st: MatchState, pos: int) -> int:
        end = st.text.find(self.routing.header_end, pos, pos + MAX_HEADER)
        if end < 0:
            if st.partial and st.n - pos < MAX_HEADER:
                return st.need(self, pos, pos)
            return st.fail(pos, f"a message header ending with {self.routing.header_end!r}")
        header = st.text[pos:end]
        grammar = self.grammars.get(header)
        if grammar is None:
            grammar = self.grammars[header] = message_grammar(self.routing, header)
        return grammar.match(st, pos)

    def describe(self) -> str:
        return f"routed-message(header until {self.routing.header_end!r})"


def message_grammar(routing: Routing, header: str) -> p.Expr:
    """Build the grammar of a message whose header is known."""
    destination = routing.route(header)
    opening = p.literal(header + routing.header_end)
    stops = (*routing.terminators, routing.message_start)
    closing = p.optional(p.literals(routing.terminators))
    if destination.route == Route.CALL:
        start, stop = destination.name_at, destination.name_at + len(destination.name)
        named = (p.literal(header[:start]) + p.tool_name(p.literal(destination.name))
                 + p.literal(header[stop:] + routing.header_end))
        return p.tool(named + p.commit() + routing.call_body(destination.name) + closing)
    if destination.route == Route.DROP:
        return opening + p.until(*stops) + closing
    if destination.route == Route.REASONING and routing.extract_reasoning:
        return opening + p.commit() + p.reasoning(p.until(*stops)) + closing
    if destination.route in (Route.REASONING, Route.TEXT):
        # Reasoning left in the content, or a message to an unknown recipient, keeps its
        # markup as the model wrote it.
        return p.content(opening) + p.content(p.until(*stops)) + p.content(closing)
    return opening + p.commit() + p.content(p.until(*stops)) + closing


def routed_output(routing: Routing) -> p.Expr:
    """Match a whole routed output: messages, or plain text if it has no header."""
    message = RoutedMessage(routing)
    start = p.space() + p.optional(p.literal(routing.message_start))
    messages = message + p.zero_or_more(start + message) + p.space()
    return p.choice(messages + p.end(), p.content(p.rest()))
