"""What every grammar builder reads (analysis, options) and the small pieces they share."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from analyzer import peg as p
from analyzer.analysis.diff import segmentize_markers
from analyzer.model import Analysis, ReasoningMode, SegmentKind
from analyzer.parsing.options import ParseOptions
from analyzer.peg.captures import LiteralCapture
from analyzer.peg.expressions import (
    CHOICE_LEVEL,
    SEQUENCE_LEVEL,
    Commit,
    Optional,
    Repeat,
    Sequence,
    opening_of,
)
from analyzer.peg.scanning import Literal, Space, Token
from analyzer.peg.state import FAIL, NEED, UNTRACED, MatchState

Capture = Callable[[p.Expr], p.Expr]

# A name ends where a word character would not continue it (`special_function` must not
# match the start of `special_function_with_opt`).
NAME_END = p.not_followed_by(p.regex(r"[\w.\-]", max_length=1))


@dataclass(frozen=True)
class Build:
    """The analysis and the request options a grammar is built for."""

    analysis: Analysis
    options: ParseOptions

    @cached_property
    def extracting(self) -> bool:
        """Tell whether reasoning goes to reasoning_content (it has an end marker to stop at)."""
        reasoning = self.analysis.reasoning
        return (self.options.extract_reasoning and reasoning.mode != ReasoningMode.NONE
                and bool(reasoning.end.strip()))

    @cached_property
    def reasoning_start(self) -> str:
        return self.analysis.reasoning.start.strip()

    @cached_property
    def reasoning_end(self) -> str:
        return self.analysis.reasoning.end.strip()

    @cached_property
    def structural(self) -> tuple[str, ...]:
        """Markers that frame the answer, never part of it: content wrappers and turn markers."""
        content = self.analysis.content
        return kept(content.start, content.end, content.turn_start, content.turn_end)

    @cached_property
    def stray_reasoning(self) -> tuple[str, ...]:
        """Reasoning markers that, when reasoning is extracted, never belong in content."""
        if not self.extracting:
            return ()
        pieces = marker_tokens(self.reasoning_start)
        return kept(self.reasoning_end, *(t for t in pieces if t != self.reasoning_start))


def kept(*markers: str) -> tuple[str, ...]:
    """Strip markers and keep the non-empty ones, without duplicates."""
    return tuple(dict.fromkeys(m.strip() for m in markers if m.strip()))


def marker_tokens(text: str) -> list[str]:
    """Return the `<...>`/`[...]` tokens a marker is made of."""
    return [s.value for s in segmentize_markers(text) if s.kind == SegmentKind.MARKER]


def lit(text: str) -> p.Expr:
    """Match a marker (its surrounding whitespace is not part of it; empty matches nothing)."""
    return p.literal(text.strip())


class SpacedLiteral(p.Expr):
    """Match optional whitespace then a marker, in one step (it sits in every hot loop)."""

    __slots__ = ("text", "size")

    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)

    def match(self, st: MatchState, pos: int) -> int:
        text = st.text
        if text.startswith(self.text, pos):
            return pos + self.size
        start = pos
        while pos < st.n and text[pos] in " \t\r\n":
            pos += 1
        if text.startswith(self.text, pos):
            return pos + self.size
        if st.partial and (pos == st.n or self.text.startswith(text[pos:])):
            return st.need(self, start, start)
        if pos < st.fail_pos:
            return FAIL  # not recorded: no message to build
        return st.fail(pos, f"`{self.text}`")

    def waiting_end(self, text: str, at: int) -> int:
        # Whitespace, then less than the marker: it waits where it did.
        rest = text[at:].lstrip(" \t\r\n")
        return at if len(rest) < self.size and self.text.startswith(rest) else -1

    def describe(self) -> str:
        return "space " + json.dumps(self.text, ensure_ascii=False)

    # What a whole parse asks before running it (a choice between a quoted and another
    # value skips it at the other's first character): it opens with whitespace or the
    # marker, needs the marker, and never commits.

    def opening_chars(self) -> frozenset[str] | None:
        return frozenset(" \t\r\n" + self.text[0]) if self.text else None

    def matches_at_end(self) -> bool:
        return not self.text

    def never_commits(self) -> bool:
        return True


def spaced(text: str) -> p.Expr:
    """Match optional whitespace then a marker (nothing at all for an empty marker)."""
    core = text.strip()
    return SpacedLiteral(core) if core else p.eps()


def maybe(text: str) -> p.Expr:
    """Match a marker if it is there, with the whitespace before it."""
    core = text.strip()
    return p.optional(SpacedLiteral(core)) if core else p.eps()


def closing(text: str) -> p.Expr:
    """Match a closing marker with the whitespace before it; one left out is read as there,
    and noted (a model often stops where the end of turn replaces it)."""
    core = text.strip()
    if not core:
        return p.eps()
    missing = p.noted(p.eps(), "missing_close", "accepted", f"`{core}`")
    return p.choice(SpacedLiteral(core), missing)


def text_loop(capture: Capture, stops: Iterable[str], at_stop: p.Expr | None,
              breaker: p.Expr | None = None) -> p.Expr:
    """Capture text up to the stops; at a stop, run at_stop and go on, unless breaker matches.

    at_stop consumes the stop (dropping it, capturing it, or parsing a nested block); the
    loop ends at the end of input, where at_stop fails, or where breaker matches. Once at_stop
    took a stop, the text after it is settled (commit): a stream sends it as it comes instead
    of holding it back, and re-reading it, until the next stop.
    """
    markers = tuple(dict.fromkeys(s for s in stops if s))
    if not markers or at_stop is None:
        return capture(p.until(*markers))
    step = at_stop + p.commit() + capture(p.until(*markers))
    if breaker is None:
        return capture(p.until(*markers)) + p.zero_or_more(step)
    return capture(p.until(*markers)) + broken_loop(breaker, step)



def dropped(markers: Iterable[str]) -> p.Expr | None:
    """Match any of the markers without capturing them (None when there are none)."""
    kept_markers = [m for m in markers if m]
    return p.literals(kept_markers) if kept_markers else None


def first_of(*alternatives: p.Expr | None) -> p.Expr | None:
    """Build an ordered choice of the given alternatives (None when there are none)."""
    present = [a for a in alternatives if a is not None]
    return p.choice(*present) if present else None


# A regex standing for a run that succeeds (see StandsFor.whole_pattern), and what each of
# its groups records: (role, flags, info) of a capture event.
Lead = tuple[str, tuple[tuple[Any, int, Any], ...]]


class StandsFor(p.Expr):
    """A faster way to match an expression it stands for (`general_form`): it reads as that
    expression in dumps, and gives its answers to the static questions a parse asks."""

    __slots__ = ()

    @property
    def general_form(self) -> p.Expr:
        raise NotImplementedError

    def describe(self) -> str:
        return self.general_form.describe()

    def children(self) -> tuple[p.Expr, ...]:
        return self.general_form.children()

    def prefix(self) -> tuple[str, bool]:
        return self.general_form.prefix()

    def opening_chars(self) -> frozenset[str] | None:
        return self.general_form.opening_chars()

    def matches_at_end(self) -> bool:
        return self.general_form.matches_at_end()

    def never_commits(self) -> bool:
        return self.general_form.never_commits()

    def skipped_chars(self) -> frozenset[str] | None:
        return self.general_form.skipped_chars()

    def idle_at_end(self) -> bool:
        return self.general_form.idle_at_end()

    def whole_pattern(self) -> Lead | None:
        """A regex that, where it matches, stands for a whole untraced run of this expression
        ending where the regex does, committing nothing (its groups: what it captures, in
        order); where it does not match, this may still. None: no such regex."""
        return None

    def general(self, st: MatchState, pos: int) -> int:
        """Match as the general form does. A run that stops inside it resumes as this
        expression, as it would have without the shortcut (a stream compares resume points)."""
        form = self.general_form
        end = form.match(st, pos)
        if end == NEED and st.resume is form:
            st.resume = self
        return end


class Dispatch(StandsFor):
    """An ordered choice among alternatives that each start with their own literal, picked by
    one regex match instead of trying them in turn (function names, argument names).

    Near the end of partial input, where a longer literal may still be coming, and whenever
    the picked alternative fails, the plain ordered choice decides."""

    __slots__ = ("choice", "pattern", "table", "longest")

    def __init__(self, choice: p.Expr, leads: list[str]) -> None:
        self.choice = choice
        ordered = sorted(leads, key=len, reverse=True)
        self.pattern = re.compile("|".join(re.escape(lead) for lead in ordered))
        self.table = dict(zip(leads, choice.children(), strict=True))
        self.longest = len(ordered[0])

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial and st.n - pos <= self.longest:
            return self.choice.match(st, pos)
        found = self.pattern.match(st.text, pos)
        if found is None:
            return self.choice.match(st, pos)
        events, commits = len(st.events), st.commits
        end = self.table[found.group()].match(st, pos)
        if end != FAIL or st.commits != commits:
            return end
        del st.events[events:]
        return self.choice.match(st, pos)

    @property
    def general_form(self) -> p.Expr:
        return self.choice


class DispatchOrElse(StandsFor):
    """`dispatch | otherwise` (an undeclared argument, a JSON body): a whole parse that records
    no failures takes the dispatched alternative in one step instead of two (the choice, then
    the dispatch). Streams and traces, and any input the dispatch does not settle, run the
    choice itself."""

    __slots__ = ("choice", "dispatch")
    level = CHOICE_LEVEL  # described as the choice it stands for

    def __init__(self, dispatch: Dispatch, otherwise: p.Expr) -> None:
        self.choice = p.choice(dispatch, otherwise)
        self.dispatch = dispatch

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return self.general(st, pos)
        found = self.dispatch.pattern.match(st.text, pos)
        if found is not None:
            events, commits = len(st.events), st.commits
            end = self.dispatch.table[found.group()].match(st, pos)
            if end >= 0:
                return end
            del st.events[events:]  # as the choice would on the way out
            if st.commits != commits:
                return FAIL
        return self.choice.match(st, pos)

    @property
    def general_form(self) -> p.Expr:
        return self.choice


SPACES = "[ \\t\\r\\n]*+"  # what Space and the whitespace of a token take: all, never less


def lead_pattern(item: p.Expr) -> str | None:
    """The regex of a leaf that matches what it matches in a whole parse (a literal, whitespace,
    a commit, an optional literal; a captured literal, as a group of its own), or None for any
    other expression (subclasses included: they may match otherwise)."""
    kind = type(item)
    if kind is Token and isinstance(item, Token):
        return ((SPACES if item.before else "") + re.escape(item.text)
                + (SPACES if item.after else ""))
    if kind is Literal and isinstance(item, Literal):
        return re.escape(item.text)
    if kind is SpacedLiteral and isinstance(item, SpacedLiteral):
        return SPACES + re.escape(item.text)
    if kind is LiteralCapture and isinstance(item, LiteralCapture):
        return "(" + re.escape(item.literal) + ")"
    if kind is Space:
        return SPACES
    if isinstance(item, StandsFor):
        lead = item.whole_pattern()
        return lead[0] if lead is not None else None
    if kind is Optional and isinstance(item, Optional) and type(item.item) is Literal:
        return "(?:" + re.escape(item.item.text) + ")?+"  # a separator that may be left out
    return "" if kind is Commit else None


def lead_captures(item: p.Expr) -> tuple[tuple[Any, int, Any], ...]:
    """What the groups of an item's lead_pattern record, in order."""
    if type(item) is LiteralCapture and isinstance(item, LiteralCapture):
        return ((item.role, item.flags, item.info),)
    lead = item.whole_pattern() if isinstance(item, StandsFor) else None
    return lead[1] if lead is not None else ()


class LeadRun(StandsFor):
    """A sequence whose leading leaves (an argument's markup: literals, whitespace, a captured
    name, a commit) a whole untraced parse matches with one regex, recording what they record,
    then runs the rest. Where the regex fails the sequence runs item by item, and so do
    streams and traces: the regex only ever stands for a run that succeeds."""

    __slots__ = ("sequence", "pattern", "captures", "commits", "rest")
    level = SEQUENCE_LEVEL

    def __init__(self, sequence: Sequence, size: int) -> None:
        self.sequence = sequence
        lead = sequence.items[:size]
        self.pattern = re.compile("".join(lead_pattern(item) or "" for item in lead))
        self.captures = tuple(group for item in lead for group in lead_captures(item))
        self.commits = sum(type(item) is Commit for item in lead)
        self.rest = sequence.items[size:]

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return self.sequence.match(st, pos)  # its resume points, its failures
        found = self.pattern.match(st.text, pos)
        if found is None:
            return self.sequence.match(st, pos)
        for group, (role, flags, info) in enumerate(self.captures, 1):
            st.events.append((role, found.start(group), found.end(group), flags, info))
        st.commits += self.commits
        pos = found.end()
        for item in self.rest:  # Sequence.match's whole-parse loop, one frame less
            pos = item.match(st, pos)
            if pos < 0:
                return pos
        return pos

    @property
    def general_form(self) -> p.Expr:
        return self.sequence

    def first_leaf(self) -> p.Expr | None:
        return self.sequence.first_leaf()

    def whole_pattern(self) -> Lead | None:
        # Read whole by its regex, committing nothing: the regex is its lead.
        if self.rest or self.commits:
            return None
        return self.pattern.pattern, self.captures

    def skipped_chars(self) -> frozenset[str] | None:
        return self.sequence.skipped_chars()

    def never_commits(self) -> bool:
        return self.sequence.never_commits()


def lead_run(expr: p.Expr) -> p.Expr:
    """expr, its leading leaves matched in one step when it is a sequence of at least two of
    them followed by more."""
    if not isinstance(expr, Sequence) or type(expr) is not Sequence:
        return expr
    items, size = expr.items, 0
    while size < len(items) - 1 and lead_pattern(items[size]) is not None:
        size += 1
    return LeadRun(expr, size) if size >= 2 else expr


def read_at_once(expr: p.Expr) -> p.Expr:
    """expr matched by one regex in whole untraced parses where that regex matches, when it
    is a sequence of items lead_pattern reads (a call's head, matched again and again as the
    content's lookahead and the wrapper's: one step instead of one per item)."""
    if type(expr) is not Sequence or not isinstance(expr, Sequence):
        return expr
    if not all(lead_pattern(item) is not None for item in expr.items):
        return expr
    return LeadRun(expr, len(expr.items))


class BreaksBefore(StandsFor):
    """`(!breaker step)*` where breaker has a lead (a regex that, where it matches, says the
    breaker matches: a call's head). A whole parse that records no failures ends the loop
    where that regex matches, without running the repetition, its item and the lookahead
    (at the start of an output that is a call, every time); elsewhere it runs the item.
    Streams and traces run the repetition."""

    __slots__ = ("repeat", "item", "breaker", "opening")

    def __init__(self, repeat: Repeat, breaker: re.Pattern[str]) -> None:
        self.repeat = repeat
        self.item = repeat.item
        self.breaker = breaker
        self.opening: tuple[frozenset[str] | None, bool] | None = None  # found at first use

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return self.general(st, pos)
        chars, at_end = self.opening or self._find_opening()
        text, n, item, breaker = st.text, st.n, self.item, self.breaker
        while True:
            if (text[pos] not in chars if chars is not None and pos < n
                    else pos == n and not at_end):
                return pos  # the item cannot start here (see opening_of)
            if breaker.match(text, pos):
                return pos  # the item's lookahead fails, cleanly
            events, commits = len(st.events), st.commits
            end = item.match(st, pos)
            if end < 0:
                del st.events[events:]
                return FAIL if st.commits != commits else pos
            if end == pos:
                return pos
            pos = end

    def _find_opening(self) -> tuple[frozenset[str] | None, bool]:
        self.opening = opening_of(self.item)
        return self.opening

    @property
    def general_form(self) -> p.Expr:
        return self.repeat


def broken_loop(breaker: p.Expr, step: p.Expr) -> p.Expr:
    """Match `(!breaker step)*`, ended by breaker's lead in whole parses where it has one."""
    loop = p.zero_or_more(p.not_followed_by(breaker) + step)
    lead = lead_pattern(breaker)  # its captures would go with the lookahead: only it counts
    if lead is None or not isinstance(loop, Repeat):
        return loop
    return BreaksBefore(loop, re.compile(lead))


def or_else(first: p.Expr, otherwise: p.Expr) -> p.Expr:
    """Match first, or else otherwise (`first | otherwise`, one step less for a dispatch)."""
    if isinstance(first, Dispatch):
        return DispatchOrElse(first, otherwise)
    return p.choice(first, otherwise)


def one_of_leading(alternatives: list[p.Expr]) -> p.Expr:
    """Choose among alternatives; dispatch on their leading literals when each has its own."""
    choice = p.choice(*alternatives)
    leads = [alternative.prefix()[0] for alternative in alternatives]
    if len(alternatives) < 2 or not all(leads) or len(set(leads)) != len(leads):
        return choice
    return Dispatch(choice, leads)
