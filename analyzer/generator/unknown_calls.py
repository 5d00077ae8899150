"""A call of a function the request does not declare: kept as content, whole, and reported once.

Where a call marker's call fails at the function name (the name is no declared function),
the call's text up to its closing markup (or, for bare JSON calls, the call object) is one
piece of content, verbatim: the markers inside it are neither dropped as structure nor tried
again as more calls, and the output gets one `unknown_function` deviation for the call.
Any other failure keeps just the marker as text, as before (a call the marker promised but
that does not follow it may be followed by a valid one).
"""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator.build import Build, kept
from analyzer.generator.calls import CallGrammar
from analyzer.model import ToolFormat
from analyzer.parsing.deviations import names_only
from analyzer.peg.diagnostics import failure_of
from analyzer.peg.state import MatchState


class FailsAtName(p.Expr):
    """Match nothing where a call marker starts a call that fails at its function name."""

    __slots__ = ("triggers", "head")

    def __init__(self, triggers: tuple[str, ...], head: p.Expr) -> None:
        self.triggers = triggers
        self.head = head

    def match(self, st: MatchState, pos: int) -> int:
        if not st.text.startswith(self.triggers, pos):
            return st.fail(pos, "a call marker")
        failure = failure_of(self.head, st, pos, pos)
        if failure is None or not names_only(failure.expected):
            return st.fail(pos, "a call of an undeclared function")
        return pos

    def describe(self) -> str:
        return "fails-at-name"


def call_closings(b: Build) -> tuple[str, ...]:
    """Return the markers that close a call or the calls (function, per-call, section)."""
    tools = b.analysis.tools
    return kept(tools.function.close, tools.format.per_call_end, tools.format.section_end)


def unknown_call_text(b: Build, calls: CallGrammar) -> p.Expr | None:
    """Match a call's text from its marker through its closing markup (None: no way to
    tell where such a call ends)."""
    closings = call_closings(b)
    if closings:
        close = p.literals(closings)
        return (p.literals(calls.triggers) + p.until(*closings) + close
                + p.zero_or_more(p.space() + close))
    fmt = b.analysis.tools.format
    if fmt.mode == ToolFormat.JSON_NATIVE:  # the marker, if it is not the JSON's own bracket
        value = p.json_value(fmt.uses_python_dicts)
        return p.choice(value, p.literals(calls.triggers) + p.space() + value)
    return None


def unknown_call(b: Build, calls: CallGrammar | None) -> p.Expr | None:
    """Keep a call of an undeclared function as content, whole, noting why (None: the
    template's calls cannot be delimited, or the request has no calls)."""
    if calls is None or not calls.triggers:
        return None
    text = unknown_call_text(b, calls)
    if text is None:
        return None
    return FailsAtName(calls.triggers, calls.head) + p.kept_as_text(p.content(text), calls.head)
