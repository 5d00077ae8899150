"""What every grammar builder reads (analysis, options) and the small pieces they share."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from analyzer import peg as p
from analyzer.analysis.diff import segmentize_markers
from analyzer.model import Analysis, ReasoningMode, SegmentKind
from analyzer.parsing.options import ParseOptions
from analyzer.peg import captures
from analyzer.peg.captures import LiteralCapture, ToolCapture
from analyzer.peg.expressions import (
    CHOICE_LEVEL,
    Choice,
    Commit,
    Eps,
    Not,
    Optional,
    Peek,
    Repeat,
    Rule,
    Sequence,
    continue_sequence,
    opening_of,
)
from analyzer.peg.notes import Noted
from analyzer.peg.roles import Role
from analyzer.peg.scanning import Literal, Regex, Space, Token
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
    return Closing(p.choice(SpacedLiteral(core), missing), core)


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


# A named group of a lead pattern, and the event its expression records over it (role, flags,
# info), in the order the expressions record them.
Mark = tuple[str, Role, int, Any]
# A regex standing for a run that succeeds (see StandsFor.whole_pattern), and the marks of its
# named groups.
Lead = tuple[str, tuple[Mark, ...]]
# A named group's opening in a lead's regex (renamed when one lead goes into another).
GROUP_NAME = re.compile(r"\(\?P<(\w+)>")


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
        ending where the regex does, committing nothing (its named groups: what it captures,
        marked in the order it records them); where it does not match, this may still. None:
        no such regex."""
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

    __slots__ = ("choice", "pattern", "table", "whole_table", "longest")

    def __init__(self, choice: p.Expr, leads: list[str]) -> None:
        self.choice = choice
        ordered = sorted(leads, key=len, reverse=True)
        self.pattern = re.compile("|".join(re.escape(lead) for lead in ordered))
        self.table = dict(zip(leads, choice.children(), strict=True))
        # For whole parses that record no failures: the alternatives' whole-parse forms.
        self.whole_table = {lead: whole_form(alternative)
                            for lead, alternative in self.table.items()}
        self.longest = len(ordered[0])

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial and st.n - pos <= self.longest:
            return self.choice.match(st, pos)
        found = self.pattern.match(st.text, pos)
        if found is None:
            return self.choice.match(st, pos)
        events, commits = len(st.events), st.commits
        table = self.table if st.partial or st.fail_pos != UNTRACED else self.whole_table
        end = table[found.group()].match(st, pos)
        if end != FAIL or st.commits != commits:
            return end
        del st.events[events:]
        return self.choice.match(st, pos)

    @property
    def general_form(self) -> p.Expr:
        return self.choice


MAX_BEGINNINGS = 64  # more texts than any choice of names spelled a few ways makes

Beginnings = tuple[frozenset[str], bool]


def beginnings(expr: p.Expr, inside: frozenset[int] = frozenset()) -> Beginnings | None:
    """The texts every match of expr begins with, one of them, and whether a match is exactly
    one of them (None: unknown). Before a text that begins with none of them, expr fails
    cleanly: with no commit, its events deleted by whatever tried it.

    A sequence is read up to its first item that is not exactly a text (`("functions." |
    eps) "get_weather" ":"` begins with `functions.get_weather:` or `get_weather:`); such
    items never commit, so failing among them is clean."""
    kind = type(expr)
    if kind is Literal and isinstance(expr, Literal):
        return frozenset((expr.text,)), True
    if kind is LiteralCapture and isinstance(expr, LiteralCapture):
        return frozenset((expr.literal,)), True
    if kind is Eps:
        return frozenset(("",)), True
    if isinstance(expr, StandsFor):
        return beginnings(expr.general_form, inside)
    if kind in (captures.Capture, ToolCapture, Noted, Rule):
        inner = expr.children()
        if not inner or id(expr) in inside:  # a rule not yet defined, or recursive
            return None
        return beginnings(inner[0], inside | {id(expr)})
    if kind is Choice:
        return _choice_beginnings(expr.children(), inside)
    if kind is Sequence:
        return _sequence_beginnings(expr.children(), inside)
    return None


def _choice_beginnings(alternatives: tuple[p.Expr, ...], inside: frozenset[int]
                       ) -> Beginnings | None:
    texts: set[str] = set()
    exact = True
    for alternative in alternatives:
        found = beginnings(alternative, inside)
        if found is None:
            return None
        texts |= found[0]
        exact = exact and found[1]
    return (frozenset(texts), exact) if len(texts) <= MAX_BEGINNINGS else None


def _sequence_beginnings(items: tuple[p.Expr, ...], inside: frozenset[int]
                         ) -> Beginnings | None:
    texts = frozenset(("",))
    for item in items:
        found = beginnings(item, inside)
        joined = None if found is None else frozenset(a + b for a in texts for b in found[0])
        if found is None or joined is None or len(joined) > MAX_BEGINNINGS:
            return (texts, False) if texts != {""} else None  # nothing known: None
        texts = joined
        if not found[1]:
            return texts, False
    return texts, True


class DispatchByBeginnings(Dispatch):
    """An ordered choice whose alternatives each begin with one of a few texts, some sharing
    a first character (`functions.get_weather:` or `get_weather:`): a whole parse that
    records no failures finds, with one regex, the first alternative that may begin here and
    runs it alone, in its whole-parse form (a call's head read by one regex). Streams and
    traces, and input where that alternative fails, run the choice, the alternatives as built.

    The regex takes the longest text found; every shorter one found is a beginning of it, so
    the first alternative holding any of them is known in advance (as the choice would reach
    it: the alternatives before it fail cleanly, their texts not being here)."""

    __slots__ = ()

    def __init__(self, choice: p.Expr, texts: list[frozenset[str]]) -> None:
        self.choice = choice
        ordered = sorted({text for group in texts for text in group}, key=len, reverse=True)
        self.pattern = re.compile("|".join(re.escape(text) for text in ordered))
        # What runs where a text is found: its alternative's whole-parse form (the choice,
        # streams and traces run the alternatives as they are).
        forms = [whole_form(alternative) for alternative in choice.children()]
        self.table = {text: forms[first_beginning(texts, text)] for text in ordered}
        self.whole_table = self.table  # only whole untraced parses read it
        self.longest = len(ordered[0])

    def match(self, st: MatchState, pos: int) -> int:
        choice = self.choice
        if st.partial or st.fail_pos != UNTRACED:  # self.general, inlined: every stream run
            end = choice.match(st, pos)
            if end == NEED and st.resume is choice:
                st.resume = self
            return end
        found = self.pattern.match(st.text, pos)
        if found is None:
            return FAIL  # no alternative begins here
        events, commits = len(st.events), st.commits
        end = self.table[found.group()].match(st, pos)
        if end != FAIL or st.commits != commits:
            return end
        del st.events[events:]
        return choice.match(st, pos)


def whole_form(alternative: p.Expr) -> p.Expr:
    """What a whole parse that records no failures may run for an alternative: a rule's body
    (an untraced rule runs only that), its leading items read by one regex (lead_run)."""
    if type(alternative) is Rule and isinstance(alternative, Rule) and alternative.body:
        alternative = alternative.body
    return lead_run(alternative)


def first_beginning(texts: list[frozenset[str]], found: str) -> int:
    """The index of the first alternative one of whose texts begins found."""
    return next(index for index, group in enumerate(texts)
                if any(found.startswith(text) for text in group))


class DispatchOrElse(StandsFor):
    """`dispatch | otherwise` (an undeclared argument, a JSON body): a whole parse that records
    no failures takes the dispatched alternative in one step instead of two (the choice, then
    the dispatch), and otherwise alone where no alternative begins. Streams and traces, and
    any input the dispatch does not settle, run the choice itself."""

    __slots__ = ("choice", "dispatch", "otherwise", "picked", "lead", "near_end")
    level = CHOICE_LEVEL  # described as the choice it stands for

    def __init__(self, dispatch: Dispatch, otherwise: p.Expr) -> None:
        choice = p.choice(dispatch, otherwise)
        assert isinstance(choice, Choice), "a dispatch is never a choice: nothing flattens it"
        self.choice = choice
        self.dispatch = dispatch
        self.otherwise = otherwise
        # Whether a stream run may run the dispatched alternative for the choice (found at
        # first use, with the choice's leads: Choice.picks_first), and the dispatch's literal
        # prefix in the choice.
        self.picked: bool | None = None
        self.lead = ""
        # What the dispatch runs near the end of partial input (no longer literal there can
        # be told from one still coming): its choice (None: a dispatch that does otherwise).
        self.near_end = dispatch.choice if type(dispatch) is Dispatch else None

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial:
            # A held argument runs this on every chunk. Where the choice would run the
            # dispatch first and the dispatch's pick is decided (Dispatch's own test: its
            # regex finds a whole literal with more text after its longest), run the picked
            # alternative; where the text holds the dispatch's prefix but is too short to
            # pick, run what the dispatch runs there (its choice). Then hold the choice as
            # the choice would. Elsewhere run the choice.
            choice, dispatch = self.choice, self.dispatch
            picked = self.picked
            if picked is None:
                picked = self._find_picked()
            pick = None
            if picked and st.fail_pos == UNTRACED:
                text, left = st.text, st.n - pos
                if left > dispatch.longest:
                    found = dispatch.pattern.match(text, pos)
                    if found is not None:
                        pick = dispatch.table[found.group()]
                elif text.startswith(self.lead, pos):
                    pick = self.near_end
            if pick is not None:
                events, commits = len(st.events), st.commits
                end = pick.match(st, pos)
                if end >= 0:
                    return end
                if end == NEED:
                    if st.commits == commits:
                        choice.hold_unless_decided(st, pos, 0, events)
                    if st.resume is choice:
                        st.resume = self
                    return NEED
                del st.events[events:]  # the choice would go on to the other alternative
                if st.commits != commits:
                    return FAIL
            end = choice.match(st, pos)
            if end == NEED and st.resume is choice:
                st.resume = self
            return end
        if st.fail_pos != UNTRACED:
            return self.general(st, pos)
        found = self.dispatch.pattern.match(st.text, pos)
        if found is None:
            # No alternative's literal beginning is here: each would fail cleanly (as the
            # choice skips an alternative whose prefix is not there), the otherwise decides.
            return self.otherwise.match(st, pos)
        events, commits = len(st.events), st.commits
        end = self.dispatch.whole_table[found.group()].match(st, pos)
        if end >= 0:
            return end
        del st.events[events:]  # as the choice would on the way out
        if st.commits != commits:
            return FAIL
        return self.choice.match(st, pos)

    def _find_picked(self) -> bool:
        """Find whether a stream run may pick for the choice (see match), and the prefix
        (first: a thread that sees picked set reads the prefix)."""
        picked = self.choice.picks_first()
        assert self.choice.leads is not None  # found by picks_first
        self.lead = self.choice.leads[0][1]
        self.picked = picked
        return picked

    @property
    def general_form(self) -> p.Expr:
        return self.choice


class Closing(StandsFor):
    """`space MARKER | noted(missing)`: where the marker is there, after whitespace or not
    (after every call, in most outputs), it is taken without the choice around it. The choice
    would take it just so, in any run: its first alternative matches and records nothing."""

    __slots__ = ("choice", "text", "size", "waiting")
    level = CHOICE_LEVEL  # described as the choice it stands for

    def __init__(self, choice: p.Expr, text: str) -> None:
        self.choice = choice
        self.text = text
        self.size = len(text)
        # The marker's leaf when the choice is `space MARKER | what matches anywhere`: where
        # the marker waits, that choice would hold itself on it (held_on_marker).
        self.waiting = choice.alternatives[0] if (
            type(choice) is Choice and isinstance(choice, Choice)
            and len(choice.alternatives) == 2 and type(choice.alternatives[0]) is SpacedLiteral
            and isinstance(choice.alternatives[0], SpacedLiteral)
            and choice.alternatives[0].text == text
            and choice.alternatives[1].matches_anywhere()) else None

    def match(self, st: MatchState, pos: int) -> int:
        text = st.text
        if text.startswith(self.text, pos):
            return pos + self.size
        at, n = pos, st.n
        while at < n and text[at] in " \t\r\n":  # as SpacedLiteral reads it
            at += 1
        if at > pos and text.startswith(self.text, at):
            return at + self.size
        waiting = self.waiting
        if st.partial and waiting is not None and (at == n or self.text.startswith(text[at:])):
            return self.held_on_marker(st, pos, waiting)
        choice = self.choice  # self.general, inlined
        end = choice.match(st, pos)
        if end == NEED and st.resume is choice:
            st.resume = self
        return end

    def held_on_marker(self, st: MatchState, pos: int, waiting: SpacedLiteral) -> int:
        """Wait as the choice waits where the text ends inside the marker (after whitespace
        or not): its marker's leaf needs more from pos, the other alternative would match,
        so the choice holds itself at pos (Choice.hold_unless_decided, every alternative
        kept), and this resumes as itself."""
        events = len(st.events)
        st.need(waiting, pos, pos)
        st.resume = self
        if events < st.unsafe_from:
            st.unsafe_from = events
        return NEED

    @property
    def general_form(self) -> p.Expr:
        return self.choice


TOOL_OPEN, TOOL_CLOSE = Role.TOOL_OPEN, Role.TOOL_CLOSE
SPACES = "[ \\t\\r\\n]*+"  # what Space and the whitespace of a token take: all, never less


def leaf_pattern(item: p.Expr) -> str | None:
    """The regex of a leaf that matches what it matches in a whole parse and records nothing
    (a literal, whitespace, a literal with whitespace around it), or None for any other
    expression (subclasses included: they may match otherwise)."""
    kind = type(item)
    if kind is Token and isinstance(item, Token):
        return ((SPACES if item.before else "") + re.escape(item.text)
                + (SPACES if item.after else ""))
    if kind is Literal and isinstance(item, Literal):
        return re.escape(item.text)
    if kind is SpacedLiteral and isinstance(item, SpacedLiteral):
        return SPACES + re.escape(item.text)
    if kind is Space:
        return SPACES
    if kind is Optional and isinstance(item, Optional) and type(item.item) is Literal:
        return "(?:" + re.escape(item.item.text) + ")?+"  # a separator that may be left out
    return "" if kind is Eps else None


Found = tuple[str, bool]  # a regex, and whether it matches wherever its expression does
Branch = tuple[str, str, int]  # an alternation's branch: its regex, its group, its marks


class LeadPattern:
    """A regex that matches only where a sequence's leading items match in a whole parse (in
    the same way: atomic groups and possessive repeats, as a PEG never goes back), the events
    they record (marks) and the commits they count.

    A choice reads as its first alternative (where that matches, the choice takes it; where
    it does not, the regex fails and the items run one by one), unless its alternatives are
    plain patterns (then `(?>a|b)`, exactly the choice). A lookahead needs an exact pattern:
    `!x` read as less than x would succeed where it fails.

    Reading a run's tail (the items after its lead, matched in the same regex where they
    can be: LeadRun.whole_regex), it also reads the leaves that give a tail_pattern (a
    value's text, its closing, a dialect value), a choice's later alternatives, each where the
    ones before it cannot open, and a dispatch's alternatives. Leads are sized without these:
    a stream takes a lead's regex by what its items read past their match (reads_past), which
    these do not say."""

    def __init__(self, tail: bool = False) -> None:
        self.marks: list[Mark] = []
        self.commits = 0
        self.groups = 0
        self.tail = tail
        # The last alternation read (in a tail): each branch's group and its marks' range.
        self.branches: list[tuple[str, int, int]] = []

    def of(self, expr: p.Expr, top: bool = False) -> Found | None:
        """The regex of expr (top: an item of the run's own sequence, where a commit counts;
        inside a choice or a lookahead a commit changes what failing means), or None, leaving
        no marks, when expr has none."""
        marks, commits = len(self.marks), self.commits
        found = self._of(expr, top)
        if found is None:
            del self.marks[marks:]
            self.commits = commits
        return found

    def _of(self, expr: p.Expr, top: bool) -> Found | None:
        leaf = leaf_pattern(expr)
        if leaf is not None:
            return leaf, True
        if self.tail:
            own = getattr(expr, "tail_pattern", None)
            found = own() if own is not None else None
            if found is not None:
                return found, False
        kind = type(expr)
        if kind is Commit:
            if not top:
                return None
            self.commits += 1
            return "", True
        if kind is Regex and isinstance(expr, Regex):
            return regex_pattern(expr)
        if self.tail and isinstance(expr, (Dispatch, DispatchOrElse)):
            dispatch = expr if isinstance(expr, Dispatch) else expr.dispatch
            # Only by leads that begin their own alternatives (not DispatchByBeginnings').
            return self._dispatched(dispatch, top) if type(dispatch) is Dispatch else None
        if isinstance(expr, StandsFor):
            return self._stands_for(expr)
        if kind is LiteralCapture and isinstance(expr, LiteralCapture):
            return self._captured((re.escape(expr.literal), True), expr.role, expr.flags,
                                  expr.info)
        if kind is captures.Capture and isinstance(expr, captures.Capture):
            return self._captured(self.of(expr.item), expr.role, expr.flags, expr.info)
        if kind is Noted and isinstance(expr, Noted):
            name = self._mark(Role.DEVIATION, 0, expr.note)  # recorded before its item's
            inner = self.of(expr.item)
            return None if inner is None else (f"(?P<{name}>{inner[0]})", inner[1])
        if kind is Not or kind is Peek:
            return self._lookahead(expr.children()[0], "!" if kind is Not else "=")
        if kind is Sequence:
            return self.of_items(expr.children(), top)
        if kind is Choice:
            return self._choice(expr.children())
        return None

    def _stands_for(self, expr: StandsFor) -> Found | None:
        # Its regex only says where it matches, not everywhere it does (not exact); its
        # groups are renamed into this pattern's, their marks kept in their order.
        lead = expr.whole_pattern()
        if lead is None:
            return None
        pattern, marks = lead
        names = {name: self._mark(role, flags, info) for name, role, flags, info in marks}
        return GROUP_NAME.sub(lambda group: f"(?P<{names[group[1]]}>", pattern), False

    def _mark(self, role: Role, flags: int, info: Any) -> str:
        self.groups += 1
        name = f"g{self.groups}"
        self.marks.append((name, role, flags, info))
        return name

    def _captured(self, inner: Found | None, role: Role, flags: int, info: Any
                  ) -> Found | None:
        if inner is None:
            return None
        name = self._mark(role, flags, info)  # recorded after its item's: where it ends
        return f"(?P<{name}>{inner[0]})", inner[1]

    def _lookahead(self, item: p.Expr, sign: str) -> Found | None:
        # What the item records and commits, the lookahead undoes: a pattern free of both.
        probe = LeadPattern()
        inner = probe.of(item)
        if inner is None or probe.marks or probe.commits or (sign == "!" and not inner[1]):
            return None
        return f"(?{sign}{inner[0]})", inner[1]

    def of_items(self, items: tuple[p.Expr, ...], top: bool) -> Found | None:
        """The regex of items in a row (None when one has none)."""
        parts, exact = [], True
        for item in items:
            found = self.of(item, top)
            if found is None:
                return None
            parts.append(found[0])
            exact = exact and found[1]
        return "".join(parts), exact

    def _choice(self, alternatives: tuple[p.Expr, ...]) -> Found | None:
        plain = [plain_pattern(alternative) for alternative in alternatives]
        if all(pattern is not None for pattern in plain):
            return "(?>" + "|".join(pattern or "" for pattern in plain) + ")", True
        if self.tail:
            return self._later_alternatives(alternatives)
        first = self.of(alternatives[0])
        return None if first is None else (first[0], False)

    def _dispatched(self, dispatch: Dispatch, top: bool) -> Found | None:
        # Each alternative's whole-parse form, as one branch: where no lead begins another,
        # at most one is here, the one the dispatch picks, and its branch matches only where
        # it does (otherwise, where none is, is left to the items). Every branch must count
        # the same commits (an argument's, after its name).
        leads = list(dispatch.whole_table)
        if any(one != other and other.startswith(one) for one in leads for other in leads):
            return None
        branches: list[Branch] = []
        spent: set[int] = set()
        for lead in leads:
            before, marks = self.commits, len(self.marks)
            form = dispatch.whole_table[lead]
            if type(form) is LeadRun and isinstance(form, LeadRun) and not form.tool:
                form = form.whole  # its sequence, read whole (its tail too)
            found = self.of(form, top)
            if found is None:
                return None
            spent.add(self.commits - before)
            self.commits = before
            branches.append(self._branch(found[0], marks))
        if len(spent) != 1:
            return None
        self.commits += spent.pop()
        return self._alternation(branches)

    def _later_alternatives(self, alternatives: tuple[p.Expr, ...]) -> Found | None:
        # Each alternative where the ones before it cannot open (a whole parse's choice
        # skips those, failing cleanly: opening_chars), up to the first without a pattern
        # or after one that may open anywhere.
        branches: list[Branch] = []
        closed: set[str] = set()
        for alternative in alternatives:
            marks = len(self.marks)
            found = self.of(alternative)
            if found is None:
                break
            guard = ("(?=[^" + "".join(map(re.escape, sorted(closed))) + "])" if closed
                     else "(?s:(?=.))") if branches else ""
            branches.append(self._branch(guard + found[0], marks))
            opening = alternative.opening_chars()
            if opening is None:
                break
            closed |= opening
        return self._alternation(branches) if branches else None

    def _branch(self, pattern: str, marks: int) -> Branch:
        """A branch of an alternation: its pattern in a group of its own, and its marks (the
        marks from index marks on: read just before)."""
        self.groups += 1
        name = f"g{self.groups}"
        return f"(?P<{name}>{pattern})", name, len(self.marks) - marks

    def _alternation(self, branches: list[Branch]) -> Found:
        # Only the taken branch's groups take part: LeadRun records the marks of the branch
        # whose group matched (the last group to close where the alternation ends its run:
        # Match.lastindex), or of every group that took part.
        end = len(self.marks)
        self.branches = []
        for _, name, size in reversed(branches):
            self.branches.insert(0, (name, end - size, end))
            end -= size
        return "(?>" + "|".join(pattern for pattern, _, _ in branches) + ")", False


def plain_pattern(expr: p.Expr) -> str | None:
    """The regex of expr when it matches exactly where expr does, recording nothing and
    counting no commit (None: none such)."""
    probe = LeadPattern()
    found = probe.of(expr)
    if found is None or not found[1] or probe.marks or probe.commits:
        return None
    return found[0]


def regex_pattern(leaf: Regex) -> Found | None:
    """A regex leaf as part of a bigger one: atomic (it gives back nothing, as its own match
    does not), and only when it has no groups or flags of its own to disturb the whole."""
    compiled = leaf.pattern
    if compiled.groups or compiled.flags != re.UNICODE:
        return None
    return f"(?>{compiled.pattern})", True


# How far past a lead's match its regex may have read (a stream run takes the regex's answer
# only where all of that was in the text: more input could not have changed it). A piece
# that may end the match greedily (whitespace, a regex leaf) read one character after it; a
# branch that failed (an optional literal, a lookahead, a plain choice's other alternatives)
# read from where it started, at or before the end, as far as it can read at all.


def reads_past(item: p.Expr) -> int | None:
    """The characters past the end of item's match its lead regex may have read (None: no
    bound known, or a piece LeadPattern reads only as a whole parse runs it)."""
    kind = type(item)
    if kind in (Literal, LiteralCapture, SpacedLiteral, Eps, Commit):
        return 0
    if kind is Token and isinstance(item, Token):
        return 1 if item.after else 0
    if kind is Space or kind is Regex:
        return 1
    if kind is Optional and isinstance(item, Optional) and type(item.item) is Literal:
        return reach(item.item)
    if kind in (captures.Capture, Noted):
        return reads_past(item.children()[0])
    if kind is Not or kind is Peek:
        looked = reach(item.children()[0], failing=kind is Not)
        return None if looked is None else max(1, looked)
    if kind is Sequence:
        return _widest([reads_past(part) for part in item.children()])
    if kind is Choice:
        alternatives = item.children()
        if all(plain_pattern(alternative) is not None for alternative in alternatives):
            return _widest([reach(alternative) for alternative in alternatives])
        return reads_past(alternatives[0])  # read as its first alternative alone
    return None


def reach(item: p.Expr, failing: bool = False) -> int | None:
    """The characters a match attempt of item reads from where it starts (None: unbounded or
    unknown). failing: only attempts that fail count (a negative lookahead's item, which
    fails the whole regex where it matches): a regex leaf reads at most its max_length then,
    as its own stream runs assume."""
    kind = type(item)
    if kind is Literal and isinstance(item, Literal):
        return item.size
    if kind is LiteralCapture and isinstance(item, LiteralCapture):
        return len(item.literal)
    if kind is Token and isinstance(item, Token):
        return None if item.before or item.after else item.size
    if kind is Eps or kind is Commit:
        return 0
    if kind is Regex and isinstance(item, Regex):
        return item.max_length if failing else None
    if kind is Optional and isinstance(item, Optional) and type(item.item) is Literal:
        return reach(item.item)
    if kind in (captures.Capture, Noted):
        return reach(item.children()[0], failing)
    if kind is Not or kind is Peek:  # either outcome of its item may be its own
        return reach(item.children()[0])
    if kind is Sequence:  # the parts before the one that fails matched
        parts = [reach(part) for part in item.children()]
        return None if None in parts else sum(part or 0 for part in parts)
    if kind is Choice:
        return _widest([reach(alternative, failing) for alternative in item.children()])
    return None


def _widest(reads: list[int | None]) -> int | None:
    return None if None in reads else max((read or 0 for read in reads), default=0)


class LeadRun(StandsFor):
    """A sequence whose leading items (an argument's markup: literals, whitespace, a captured
    name, a commit; a call's head: a captured id and name, a lookahead, a choice taken at
    its first alternative) a whole untraced parse matches with one regex, recording what they
    record, then runs the rest. Where the regex fails the sequence runs item by item, and so
    do streams and traces: the regex only ever stands for a run that succeeds.

    Around a tool call's sequence (`whole` a tool capture) it records the call's opening and
    closing as well, one frame less at every call."""

    __slots__ = ("whole", "tool", "pattern", "marks", "lead_marks", "commits", "rest", "steps",
                 "margin", "looks", "whole_regex", "tail_group", "tail_marks", "tail_commits",
                 "tail_branches")

    def __init__(self, sequence: Sequence, size: int, whole: p.Expr | None = None) -> None:
        self.whole = sequence if whole is None else whole
        self.tool = whole is not None
        lead = LeadPattern()
        found = lead.of_items(sequence.items[:size], top=True)
        assert found is not None, "lead_run sized the lead by what LeadPattern reads"
        self.pattern = re.compile(found[0])
        groups = self.pattern.groupindex
        self.marks = tuple((groups[name], role, flags, info)
                           for name, role, flags, info in lead.marks)
        self.commits = lead.commits
        self.lead_marks = tuple(lead.marks)  # by group name: see whole_pattern
        self.rest = sequence.items[size:]
        # Each item after the lead with the items after it (a resume point's tail).
        self.steps = tuple((item, sequence.items[at + 1:])
                           for at, item in enumerate(sequence.items) if at >= size)
        # What a stream run needs to take the regex (see reads_past): the characters that
        # must follow its match (None: never), and whether it holds lookaheads, which a
        # stream may have left undecided in its memo (the general form goes on from there).
        self.margin = None if self.tool else _widest([reads_past(item)
                                                      for item in sequence.items[:size]])
        self.looks = "(?=" in found[0] or "(?!" in found[0]
        # A whole parse's regex: the lead, then the rest where it can be read too (a value
        # after an argument's name), else nothing more (the rest runs item by item).
        self.whole_regex, self.tail_group, self.tail_commits = self.pattern, 0, 0
        self.tail_marks: tuple[tuple[int, Role, int, Any], ...] = ()
        # Where the rest is one alternation (tail_group -1): each branch's group, and the
        # marks it holds.
        self.tail_branches: dict[int, tuple[tuple[int, Role, int, Any], ...]] = {}
        if not self.tool and self.rest:
            self._read_tail(lead, found[0])

    def _read_tail(self, lead: LeadPattern, head: str) -> None:
        """Read the rest into the whole parse's regex, optional after the lead: one group, or
        where the rest is one alternation a group per branch."""
        marks, commits = len(lead.marks), lead.commits
        lead.tail, lead.branches = True, []
        tail = lead.of_items(self.rest, top=True)
        if tail is None:
            return
        self.tail_commits = lead.commits - commits
        rest = self.rest[0]
        if len(self.rest) == 1 and lead.branches and (
                type(rest) is Choice or isinstance(rest, (Dispatch, DispatchOrElse))):
            # The rest is one alternation: the branch taken is the match's last group.
            self.whole_regex = re.compile(f"{head}{tail[0]}?+")
            groups = self.whole_regex.groupindex
            self.tail_branches = {groups[name]: self._marks(lead.marks[start:end], groups)
                                  for name, start, end in lead.branches}
            self.tail_group = -1
            return
        self.whole_regex = re.compile(f"{head}(?P<tail>{tail[0]})?+")
        groups = self.whole_regex.groupindex
        self.tail_group = groups["tail"]
        self.tail_marks = self._marks(lead.marks[marks:], groups)

    @staticmethod
    def _marks(marks: list[Mark], groups: Mapping[str, int]
               ) -> tuple[tuple[int, Role, int, Any], ...]:
        return tuple((groups[name], role, flags, info) for name, role, flags, info in marks)

    def match(self, st: MatchState, pos: int) -> int:
        if st.fail_pos != UNTRACED:
            return self.whole.match(st, pos)  # its failures
        if st.partial:
            found = self.decided_lead(st, pos)
            if found is None:
                return self.whole.match(st, pos)  # its resume points
            events = st.events
            for group, role, flags, info in self.marks:
                start, end = found.span(group)
                events.append((role, start, end, flags, info))
            st.commits += self.commits
            pos = found.end()
            for item, after in self.steps:  # Sequence.match's partial loop, after the lead
                end = item.match(st, pos)
                if end < 0:
                    if end == NEED:
                        st.resume = continue_sequence(st.resume, after)
                    return end
                pos = end
            return pos
        found = self.whole_regex.match(st.text, pos)
        if found is None:
            return self.whole.match(st, pos)
        events, tool = st.events, self.tool
        if tool:
            events.append((TOOL_OPEN, pos, pos, 0, None))
        span = found.span
        for group, role, flags, info in self.marks:
            start, end = span(group)
            events.append((role, start, end, flags, info))
        st.commits += self.commits
        tail = self.tail_group
        if tail:  # the rest may have been read too: its group, or one branch's (-1)
            taken = self.tail_branches.get(found.lastindex or 0) if tail < 0 else (
                self.tail_marks if found.start(tail) >= 0 else None)
            if taken is not None:
                for group, role, flags, info in taken:
                    start, end = span(group)
                    if start >= 0:  # a group of the branch taken (not one nested in it)
                        events.append((role, start, end, flags, info))
                st.commits += self.tail_commits
                return found.end()
        pos = found.end()
        for item in self.rest:  # Sequence.match's whole-parse loop, one frame less
            pos = item.match(st, pos)
            if pos < 0:
                return pos
        if tool:
            events.append((TOOL_CLOSE, pos, pos, 0, None))
        return pos

    @property
    def reads_tail(self) -> bool:
        """Tell whether a whole parse's regex reads the rest too, where it can."""
        return self.tail_group != 0

    def decided_lead(self, st: MatchState, pos: int) -> re.Match[str] | None:
        """In a stream run, the lead's regex match where more input cannot change it: it ends
        at least `margin` characters before the end of the text (None: the items run one by
        one, as the sequence runs them, and they may wait).

        Where it is decided, the lead's items would match just so, recording what its marks
        record and counting its commits, with nothing to wait for; the items after it run as
        the sequence runs them, leaving the resume point it would leave."""
        margin = self.margin
        if margin is None or (self.looks and st.memo):
            return None
        found = self.pattern.match(st.text, pos)
        return None if found is None or found.end() + margin > st.n else found

    @property
    def level(self) -> int:  # type: ignore[override]  # described as what it stands for
        return self.whole.level

    @property
    def general_form(self) -> p.Expr:
        return self.whole

    def first_leaf(self) -> p.Expr | None:
        return self.whole.first_leaf()

    def whole_pattern(self) -> Lead | None:
        # Read whole by its regex, committing nothing: the regex is its lead.
        if self.rest or self.commits or self.tool:
            return None
        return self.pattern.pattern, self.lead_marks

    def skipped_chars(self) -> frozenset[str] | None:
        return self.whole.skipped_chars()

    def never_commits(self) -> bool:
        return self.whole.never_commits()


def lead_run(expr: p.Expr) -> p.Expr:
    """expr, its leading items matched in one step when it is a sequence (or a tool call
    around one) of at least two of them followed by more."""
    tool = type(expr) is ToolCapture
    sequence = expr.children()[0] if tool else expr
    if not isinstance(sequence, Sequence) or type(sequence) is not Sequence:
        return expr
    items, size, lead = sequence.items, 0, LeadPattern()
    while size < len(items) - 1 and lead.of(items[size], top=True) is not None:
        size += 1
    if size < 2:
        return expr
    return LeadRun(sequence, size, expr if tool else None)


def read_at_once(expr: p.Expr) -> p.Expr:
    """expr matched by one regex in whole untraced parses where that regex matches, when it
    is a sequence of items LeadPattern reads (a call's head, matched again and again as the
    content's lookahead and the wrapper's: one step instead of one per item)."""
    if type(expr) is not Sequence or not isinstance(expr, Sequence):
        return expr
    if LeadPattern().of_items(expr.items, top=True) is None:
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
    # Where the lead matches, the breaker does (its captures go with the lookahead: only
    # the match counts).
    lead = LeadPattern().of(breaker, top=True)
    if lead is None or not isinstance(loop, Repeat):
        return loop
    return BreaksBefore(loop, re.compile(lead[0]))


class LedLoop(StandsFor):
    """`item*` whose item begins with markup that records and commits nothing (the separator
    and opener before every call after the first): a whole parse that records no failures
    reads that markup by one regex and runs the item's other items itself, one loop for
    every item (no frame for the item's sequence and its leaves). Where the regex fails and
    stands for the markup exactly, the item would fail cleanly there: the loop is over.
    Streams and traces run the repetition (a stream's resume points are its own)."""

    __slots__ = ("repeat", "item", "lead", "exact", "rest")

    def __init__(self, repeat: Repeat, lead: re.Pattern[str], exact: bool,
                 rest: tuple[p.Expr, ...]) -> None:
        self.repeat = repeat
        self.item = repeat.item
        self.lead = lead
        self.exact = exact
        self.rest = rest

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return self.repeat.match(st, pos)
        text, lead, rest, events = st.text, self.lead, self.rest, st.events
        while True:  # Repeat.match's whole-parse loop (no least, no most)
            found = lead.match(text, pos)
            if found is None and self.exact:
                return pos
            count, commits = len(events), st.commits
            if found is None:
                end = self.item.match(st, pos)
            else:
                end = found.end()
                for item in rest:  # Sequence.match's whole-parse loop, after the lead
                    end = item.match(st, end)
                    if end < 0:
                        break
            if end < 0:
                del events[count:]
                return FAIL if st.commits != commits else pos
            if end == pos:  # an item matching empty would loop forever
                return pos
            pos = end

    @property
    def general_form(self) -> p.Expr:
        return self.repeat


def led_loop(repeat: p.Expr) -> p.Expr:
    """`item*`, its item's leading markup read by one regex in whole parses (LedLoop), where
    the item is a sequence that begins with markup recording and committing nothing."""
    if not isinstance(repeat, Repeat) or repeat.least or repeat.most is not None:
        return repeat
    item = repeat.item
    if not isinstance(item, Sequence):
        return repeat
    items, size, lead = item.items, 0, LeadPattern()
    while size < len(items) - 1 and lead.of(items[size], top=True) is not None:
        size += 1
    if not size or lead.marks or lead.commits:
        return repeat
    found = LeadPattern().of_items(items[:size], top=True)
    if found is None:
        return repeat
    return LedLoop(repeat, re.compile(found[0]), found[1], items[size:])


def or_else(first: p.Expr, otherwise: p.Expr) -> p.Expr:
    """Match first, or else otherwise (`first | otherwise`, one step less for a dispatch)."""
    if isinstance(first, Dispatch):
        return DispatchOrElse(first, otherwise)
    return p.choice(first, otherwise)


def one_of_leading(alternatives: list[p.Expr]) -> p.Expr:
    """Choose among alternatives; dispatch on their leading literals when each has its own."""
    choice = p.choice(*alternatives)
    if len(alternatives) < 2:
        return choice
    leads = [alternative.prefix()[0] for alternative in alternatives]
    if all(leads) and len(set(leads)) == len(leads):
        return Dispatch(choice, leads)
    texts = [beginnings(alternative) for alternative in alternatives]
    if any(found is None or "" in found[0] for found in texts):
        return choice  # an alternative may begin anywhere: the choice tries them in turn
    return DispatchByBeginnings(choice, [found[0] for found in texts if found is not None])
