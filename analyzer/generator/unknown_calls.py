"""A call of a function the request does not declare: kept as content, whole, and reported once.

Where a call marker's call fails at the function name (the name is no declared function, or
the request declares none), the call's text up to its closing markup (or, for bare JSON
calls, the call object) is one piece of content, verbatim: the markers inside it are neither
dropped as structure nor tried again as more calls, and the output gets one
`unknown_function` deviation for the call. Any other failure keeps just the marker as text,
as before (a call the marker promised but that does not follow it may be followed by a
valid one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from analyzer import peg as p
from analyzer.generator.build import Build, kept
from analyzer.generator.calls import CallGrammar
from analyzer.model import ToolFormat
from analyzer.parsing.deviations import NO_FUNCTIONS, names_only
from analyzer.peg.diagnostics import Failure, failure_of
from analyzer.peg.roles import Role
from analyzer.peg.state import FAIL, NEED, MatchState

# The one function of a request that declares none: a name no output holds, so that a call
# fails right where its name stands.
PLACEHOLDER = "\uffff"
PLACEHOLDER_TOOLS = ({"type": "function", "function": {"name": PLACEHOLDER, "parameters": {
    "type": "object", "properties": {}}}},)


class UnknownCall(p.Expr):
    """Match, as text, a call that fails at its function name, from its marker through its
    closing markup; record where and why (a PROBLEM event, as `kept_as_text` does)."""

    __slots__ = ("triggers", "head", "text", "declared", "longest")

    def __init__(self, triggers: tuple[str, ...], head: p.Expr, text: p.Expr,
                 declared: bool) -> None:
        self.triggers = triggers
        self.head = head
        self.text = text
        self.declared = declared  # False: the request declares no function at all
        self.longest = max(map(len, triggers))

    def match(self, st: MatchState, pos: int) -> int:
        if not st.text.startswith(self.triggers, pos):
            if st.partial and st.n - pos < self.longest and \
                    any(t.startswith(st.text[pos:]) for t in self.triggers):
                return st.need(self, pos, pos)  # a marker may be coming
            return st.fail(pos, "a call marker")
        if st.partial and self.head.match(MatchState(st.text, True), pos) == NEED:
            return st.need(self, pos, pos)  # the name is still coming
        failure = self.name_failure(st, pos)
        if failure is None:
            return st.fail(pos, "a call of an undeclared function")
        before = len(st.events)
        st.events.append((Role.PROBLEM, pos, pos, 0, failure))
        end = self.text.match(st, pos)
        if end == FAIL:
            del st.events[before:]
        elif end >= 0:
            st.events[before] = (Role.PROBLEM, pos, end, 0, failure)  # the kept span is known
        return end

    def name_failure(self, st: MatchState, pos: int) -> Failure | None:
        """Return the head's failure if it failed where a function name stands."""
        failure = failure_of(self.head, st, pos, pos)
        if failure is None:
            return None
        if self.declared:
            return failure if names_only(failure.expected) else None
        if not failure.expected or not all(at_name(st.text, failure.offset, e)
                                           for e in failure.expected):
            return None
        return Failure(failure.offset, (NO_FUNCTIONS,), failure.rule)

    def describe(self) -> str:
        return f"unknown-call({self.text.describe()})"

    def opening_chars(self) -> frozenset[str] | None:
        # A whole parse fails at once where no trigger starts (none starts at the end).
        return frozenset(t[0] for t in self.triggers) if all(self.triggers) else None

    def matches_at_end(self) -> bool:
        return not all(self.triggers)

    def children(self) -> tuple[p.Expr, ...]:
        return (self.text,)


def at_name(text: str, offset: int, expected: str) -> bool:
    """Tell whether an expectation that holds the placeholder name failed at the name: the
    text at `offset` is what the expectation writes before the name (a head that spells its
    markup and the name as one literal fails where the markup begins)."""
    if PLACEHOLDER not in expected:
        return False
    before_name = expected.strip("`").split(PLACEHOLDER, 1)[0]
    return text.startswith(before_name, offset)


def call_closings(b: Build) -> tuple[str, ...]:
    """Return the markers that close a call or the calls (function, per-call, section)."""
    tools = b.analysis.tools
    return kept(tools.function.close, tools.format.per_call_end, tools.format.section_end)


def unknown_call_text(b: Build, calls: CallGrammar) -> p.Expr:
    """Match a call's text from its marker through its closing markup, or through its JSON
    arguments when nothing closes it (just the marker when neither tells where it ends)."""
    marker = p.literals(calls.triggers)
    closings = call_closings(b)
    if closings:
        close = p.literals(closings)
        return marker + p.until(*closings) + close + p.zero_or_more(p.space() + close)
    tools = b.analysis.tools
    value = p.json_value(tools.format.uses_python_dicts)
    if tools.format.mode == ToolFormat.JSON_NATIVE:  # the marker, unless it is the JSON's `{`
        return p.choice(value, marker + p.space() + value)
    before_args = tools.arguments.start.strip() or tools.function.name_suffix.strip()
    if tools.format.mode == ToolFormat.TAG_WITH_JSON and before_args:
        arguments = p.until(before_args) + p.literal(before_args) + p.space() + value
        return p.choice(marker + arguments, marker)
    return marker


def unknown_call(b: Build, calls: CallGrammar | None, declared: bool = True) -> p.Expr | None:
    """Keep a call of an undeclared function as content, whole, noting why (None: there are
    no calls to read)."""
    if calls is None or not calls.triggers:
        return None
    text = unknown_call_text(b, calls)
    return UnknownCall(calls.triggers, calls.head, p.content(text), declared)


ToolBuilder = Callable[[Build, Sequence[Mapping[str, Any]]], CallGrammar]


def undeclared_calls(b: Build, builder: ToolBuilder | None) -> CallGrammar | None:
    """Return the call grammar of a request that declares no function: every call there
    is of an undeclared one (None: the request declares some, or the template has no calls)."""
    if builder is None or b.options.tools:
        return None
    return builder(b, PLACEHOLDER_TOOLS)
