"""Recipient routing: an output made of messages, each a header then a body.

    [message_start] HEADER header_end BODY [terminator]   (repeated)

The header names where the body goes (GPT-OSS `<|channel|>analysis`, ` to=functions.f`,
Functionary v3.2 `>>>f`): to the reasoning, to the content, to a tool call (the body is the
call's arguments), or nowhere (a built-in tool the request did not declare). Which one is
known only once the header is complete, so one expression reads the header and then runs
the grammar of its route.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from analyzer import peg as p
from analyzer.generator.content import eos_at_end
from analyzer.parsing.deviations import NO_FUNCTIONS
from analyzer.peg.state import MatchState

MAX_HEADER = 256  # a header longer than this is text, not a header
LEAD_SPACE = re.compile(r"[ \t\r\n]*")


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
    declared: tuple[str, ...] = ()  # for a call of an undeclared function: the declared ones
    missing_namespace: str = ""  # for a call: the namespace its recipient left out


@dataclass(frozen=True)
class Routing:
    """The markup of a routed format and how to read its headers."""

    message_start: str  # before every message but the first (`<|start|>assistant`, `>>>`)
    header_end: str  # `<|message|>`, or a newline
    terminators: tuple[str, ...]  # what may end a body
    route: Callable[[str], Destination]  # header text -> destination
    call_body: Callable[[str], p.Expr]  # function name -> grammar of the call's body
    extract_reasoning: bool = True
    # What may end the output as its end of sequence (the tokenizer's or well-known texts,
    # the turn end): dropped at the very end, and noted.
    eos_texts: tuple[str, ...] = ()


class RoutedMessage(p.Expr):
    """Read one message's header, then match the grammar of its destination.

    A later message's lead (whitespace and the message start) is part of its markup: it is
    dropped with the header, or kept with it when the message stays text."""

    __slots__ = ("routing", "later", "grammars")

    def __init__(self, routing: Routing, later: bool = False) -> None:
        self.routing = routing
        self.later = later
        self.grammars: dict[str, p.Expr] = {}  # per lead and header text: headers repeat

    def match(self, st: MatchState, pos: int) -> int:
        start = self.header_start(st.text, pos)
        end = st.text.find(self.routing.header_end, start, start + MAX_HEADER)
        if end < 0:
            if st.partial and st.n - start < MAX_HEADER:
                return st.need(self, pos, pos)
            return st.fail(start, f"a message header ending with {self.routing.header_end!r}")
        grammar = self.grammars.get(st.text[pos:end])
        if grammar is None:
            grammar = message_grammar(self.routing, st.text[start:end], st.text[pos:start])
            self.grammars[st.text[pos:end]] = grammar
        return grammar.match(st, pos)

    def header_start(self, text: str, pos: int) -> int:
        """Return where the header begins: past the lead of a later message."""
        if not self.later:
            return pos
        start = LEAD_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        marker = self.routing.message_start
        return start + len(marker) if text.startswith(marker, start) else start

    def describe(self) -> str:
        return f"routed-message(header until {self.routing.header_end!r})"


def message_grammar(routing: Routing, header: str, lead: str = "") -> p.Expr:
    """Build the grammar of a message whose header (and lead before it) is known."""
    destination = routing.route(header)
    opening = p.literal(lead + header + routing.header_end)
    stops = (*routing.terminators, routing.message_start)
    closing = message_end(routing)
    if destination.route == Route.CALL:
        start, stop = destination.name_at, destination.name_at + len(destination.name)
        named = (p.literal(lead + header[:start]) + left_out(destination)
                 + p.tool_name(p.literal(destination.name))
                 + p.literal(header[stop:] + routing.header_end))
        return p.tool(named + p.commit() + routing.call_body(destination.name) + closing)
    # A complete header settles that the output is made of messages (commit): a stream
    # sends each body as it comes instead of holding it back, and re-reading it, to its end.
    if destination.route == Route.DROP:
        return opening + p.commit() + p.until(*stops) + closing
    if destination.route == Route.REASONING and routing.extract_reasoning:
        return opening + p.commit() + p.reasoning(p.until(*stops)) + reasoning_closing(routing)
    if destination.route in (Route.REASONING, Route.TEXT):
        # Reasoning left in the content, or a message to an unknown recipient, keeps its
        # markup as the model wrote it.
        text = (p.content(opening) + p.commit() + p.content(p.until(*stops))
                + p.content(closing))
        return undeclared_call(destination, lead + header, len(lead), text)
    return opening + p.commit() + p.content(p.until(*stops)) + closing


def left_out(destination: Destination) -> p.Expr:
    """Note, where a call's name begins, the namespace its recipient left out (if any)."""
    namespace = destination.missing_namespace
    if not namespace:
        return p.eps()
    return p.noted(p.eps(), "missing_namespace", "accepted", f"`{namespace}`")


def reasoning_closing(routing: Routing) -> p.Expr:
    """Match a reasoning message's terminator; one left out before the next message is read
    as there, and noted (reasoning that runs to the end of the output is not: the model may
    have run out of budget)."""
    unclosed = p.noted(p.peek(p.literal(routing.message_start)), "unclosed_reasoning",
                       "accepted", " or ".join(f"`{t}`" for t in routing.terminators))
    return p.optional(p.choice(terminator(routing), unclosed))


def terminator(routing: Routing) -> p.Expr:
    """Match a message's terminator, unless it is an end of sequence ending the output."""
    ends = p.literals(routing.terminators)
    if not routing.eos_texts:
        return ends
    return p.not_followed_by(eos_at_end(routing.eos_texts)) + ends


def message_end(routing: Routing) -> p.Expr:
    """Match a message's terminator, if there."""
    return p.optional(terminator(routing))


def trailing_eos(routing: Routing) -> p.Expr:
    """Drop an end of sequence (or a stray terminator) at the very end, noting it."""
    texts = (*routing.eos_texts, *routing.terminators)
    return p.optional(p.noted(eos_at_end(texts), "trailing_eos", "dropped",
                              "the end of the output"))


class NoFunction(p.Expr):
    """Fail where a function name stands in a request that declares none (saying so)."""

    def match(self, st: MatchState, pos: int) -> int:
        return st.fail(pos, NO_FUNCTIONS)

    def describe(self) -> str:
        return "no-function"


def undeclared_call(destination: Destination, opening: str, lead: int, text: p.Expr) -> p.Expr:
    """Keep a message calling an undeclared function as text, noting which names would do
    (none, when the request declares no function)."""
    if destination.name_at < 0:
        return text
    names = p.literals(destination.declared) if destination.declared else NoFunction()
    return p.kept_as_text(text, p.literal(opening[: lead + destination.name_at]) + names)


def routed_output(routing: Routing) -> p.Expr:
    """Match a whole routed output: messages, or plain text if it has no header."""
    messages = (RoutedMessage(routing) + p.zero_or_more(RoutedMessage(routing, later=True))
                + trailing_eos(routing) + p.space())
    return p.choice(messages + p.end(), p.content(p.rest()))
