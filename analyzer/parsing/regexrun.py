"""Stream runs decided by one regex per kept resume point (issue 11, session 10).

A stream re-runs the grammar from its resume point at every chunk that may change something.
At a call's parameter loop (`space (ARG_1 | ... | ARG_k | undeclared)*` at the head of the
resume point, each ARG_i a `build.LeadRun` over `LEAD_i '\\n'? VALUE CLOSING`), most runs read
text of a few shapes: whitespace then part of an argument's lead (`<param`, `<parameter=na`),
or a whole lead then the beginning of its value (`<parameter=name>\\nval`, maybe ending in
the first characters of a marker, `\\n</para`). For such a text, the run's outcome (events,
resume point, where it resumes and waits, the leaf, the holds) depends only on which shape it
is, the texts of its fixed parts (the argument's lead, a fragment, a marker's beginning) and
which of its variable parts (whitespace, the value's text) are empty: every position the run
reports is a boundary of one of those parts. Such a text is *decided* by its shape.

`Shapes` builds that regex from the grammar, once per resume point (`shapes_of`): a branch
per argument (its lead's own regex, its optional separator, its value as `ValueText` reads a
partial one: no character that may begin a marker, then trailing whitespace and at most a
proper beginning of one of its markers) and one for a fragment (a beginning of an argument's
lead). A text of no branch, or of a part the grammar does not spell this way, runs the tree.

The first run of each (shape, fixed texts, empty parts) key runs the tree and learns its
outcome: the same objects (`MatchState.resume` and `leaf` are kept one object per structure,
so the tree run gives the very same ones next time), every position as a boundary of the
match. Later runs of that key fill the state from the match's spans, without the tree. A
key whose outcome has a position that is no boundary, or that touches the stream's memo, is
never decided. The resume-point tables starting over (`expressions.keep_resume`) start these
over too: a learned outcome holds objects of the tables.
"""

from __future__ import annotations

import re
from typing import Any

from analyzer.generator import value_ends
from analyzer.generator.build import GROUP_NAME, Dispatch, DispatchOrElse, LeadRun
from analyzer.generator.values import PaddedLiteral
from analyzer.peg.captures import Capture
from analyzer.peg.expressions import (
    RESUME_DEPENDENTS,
    Eps,
    Expr,
    Optional,
    Repeat,
    Scope,
    Sequence,
)
from analyzer.peg.scanning import Literal, Space
from analyzer.peg.state import NEED, MatchState

SPACES = "[ \t\r\n]*"  # as Space reads it: all of it

# How many keys one point learns (a key per argument, fragment and marker beginning, a few
# empty-part patterns each: a few hundred at most); the table starts over when full.
KEYS_KEPT = 512

# Resume points met, with their shapes (NO_SHAPES: none): a few dozen per grammar; the table
# starts over when full, and with the resume-point tables (RESUME_DEPENDENTS).
POINTS_KEPT = 1024
NO_SHAPES: Any = False
UNDECIDED: Any = False  # a key that always runs the tree


class Shapes:
    """One resume point's shapes of decided text, and the outcomes learned per key."""

    __slots__ = ("dispatch", "branches", "fragments", "learned")

    def __init__(self, dispatch: re.Pattern[str], branches: dict[str, re.Pattern[str]],
                 fragments: frozenset[str]) -> None:
        # The argument leads' regex (the loop's own dispatch: longest first), and by the
        # lead it finds, the argument's branch: groups 1 whitespace, 2 the lead, 3 the
        # separator, 4 the value's text, 5 its trailing whitespace, 6 a marker's beginning
        # (2 and 6 are fixed: their texts are in the key; of the others only whether each
        # is empty).
        self.dispatch = dispatch
        self.branches = branches
        # Every beginning of an argument's lead, and "" (whitespace alone).
        self.fragments = fragments
        self.learned: dict[Any, Any] = {}

    def run(self, state: MatchState, expr: Expr, text: str, memo: dict[Any, Any],
            base: int) -> int:
        """Run expr on text as `MatchState.rerun` does, partial, with an empty memo: from a
        learned outcome where text is decided, else the tree (learning from it)."""
        n = len(text)
        start = n - len(text.lstrip(" \t\r\n"))
        lead = self.dispatch.match(text, start)
        branch = None if lead is None else self.branches.get(lead.group())
        found = None if branch is None else branch.fullmatch(text)
        if found is not None:
            regs = found.regs
            (lead_at, lead_end), (tail_at, tail_end) = regs[2], regs[6]
            key: Any = (text[lead_at:lead_end], text[tail_at:tail_end], start == 0,
                        regs[3][0] == regs[3][1], regs[4][0] == regs[4][1],
                        regs[5][0] == regs[5][1])
            fixed: tuple[int, ...] = (2, 6)
        elif text[start:] in self.fragments:
            regs = ((0, n), (0, start), (start, n))
            key = (text[start:], start == 0)
            fixed = (2,)
        else:
            return state.rerun(expr, text, True, memo, base)
        outcome = self.learned.get(key)
        if outcome is None:
            return self._learn(state, expr, text, memo, base, regs, key, fixed)
        if outcome is UNDECIDED:
            return state.rerun(expr, text, True, memo, base)
        events, commits, resume, resume_at, commit_events, need_at, unsafe_from, leaf, \
            shaky = outcome
        state.text = text
        state.n = n
        state.partial = True
        state.memo = memo
        state.base = base
        state.events = [(role, regs[start][side] + off, regs[end][other] + end_off, flags,
                         info)
                        for role, start, side, off, end, other, end_off, flags, info in events
                        ] if events else []
        state.commits = commits
        state.resume = resume
        state.resume_pos = regs[resume_at[0]][resume_at[1]] + resume_at[2]
        state.commit_events = commit_events
        state.need_end = regs[need_at[0]][need_at[1]] + need_at[2]
        state.unsafe_from = unsafe_from
        state.leaf = leaf
        state.shaky = shaky
        return NEED

    def _learn(self, state: MatchState, expr: Expr, text: str, memo: dict[Any, Any],
               base: int, regs: tuple[tuple[int, int], ...], key: Any,
               fixed: tuple[int, ...]) -> int:
        """Run the tree; keep its outcome under key, as places in the match (a group's
        start or end, or a place inside a fixed text)."""
        outcome = state.rerun(expr, text, True, memo, base)
        learned = self.learned
        if len(learned) >= KEYS_KEPT:
            learned.clear()
        learned[key] = UNDECIDED
        if outcome != NEED or memo:
            return outcome

        def place(at: int) -> tuple[int, int, int] | None:
            for group, span in enumerate(regs):
                if span[0] == at:
                    return group, 0, 0
                if span[1] == at:
                    return group, 1, 0
            for group in fixed:
                start, end = regs[group]
                if start < at < end:
                    return group, 0, at - start
            return None

        events = []
        for role, start, end, flags, info in state.events:
            first, last = place(start), place(end)
            if first is None or last is None:
                return outcome
            events.append((role, *first, *last, flags, info))
        resume_at, need_at = place(state.resume_pos), place(state.need_end)
        if resume_at is None or need_at is None:
            return outcome
        learned[key] = (tuple(events), state.commits, state.resume, resume_at,
                        state.commit_events, need_at, state.unsafe_from, state.leaf,
                        state.shaky)
        return outcome


POINTS: dict[Any, Any] = {}
RESUME_DEPENDENTS.append(POINTS)


def shapes_of(point: Expr) -> Any:
    """Return the point's Shapes (NO_SHAPES: none), built once."""
    shapes = POINTS.get(point)
    if shapes is None:
        if len(POINTS) >= POINTS_KEPT:
            POINTS.clear()
        shapes = POINTS[point] = _build(point) or NO_SHAPES
    return shapes


def _build(point: Expr) -> Shapes | None:
    """The shapes of a parameter loop at the head of point, or None (another point)."""
    head: Any = point
    while True:
        if type(head) is Sequence:
            head = head.items[0]
        elif type(head) is Scope:
            head = head.body
        else:
            break
    if type(head) is not Repeat:
        return None
    item = head.item
    if type(item) is not Sequence or len(item.items) != 2 or type(item.items[0]) is not Space:
        return None
    choice = item.items[1]
    if type(choice) is not DispatchOrElse or type(choice.dispatch) is not Dispatch:
        return None
    table = choice.dispatch.table
    branches = {}
    for lead, alternative in table.items():
        branch = _argument(alternative)
        if branch is not None:
            branches[lead] = branch
    fragments = frozenset({"", *(lead[:size] for lead in table
                                 for size in range(1, len(lead) + 1))})
    return Shapes(choice.dispatch.pattern, branches, fragments)


def _argument(alternative: Expr) -> re.Pattern[str] | None:
    """The branch of one argument: whitespace, its whole lead, then its value begun (None:
    an argument the grammar spells otherwise)."""
    if type(alternative) is not LeadRun or alternative.tool or alternative.margin != 0:
        return None
    lead = alternative.pattern.pattern
    if "(?=" in lead or "(?!" in lead:
        return None
    body = f"({SPACES})(" + GROUP_NAME.sub("(?:", lead) + ")"
    separator = False
    for item in alternative.rest:
        kind = type(item)
        if kind is Eps:
            continue
        # A one-character separator that may be left out (`'\n'?`): it waits only at the
        # end of the text, where the value's groups are empty too.
        one = (item.item.text if kind is Optional  # type: ignore[attr-defined]
               and type(item.item) is Literal else  # type: ignore[attr-defined]
               item.pad if kind is PaddedLiteral and not item.text  # type: ignore[attr-defined]
               else None)
        if one is not None and len(one) == 1 and not separator:
            body += "(" + re.escape(one) + "?)"
            separator = True
            continue
        if kind is Capture and type(item.item) is value_ends.ValueText:  # type: ignore[attr-defined]
            value = _value(item.item)  # type: ignore[attr-defined]
            if value is None:
                return None
            compiled = re.compile(body + ("" if separator else "()") + value)
            return compiled if compiled.groups == 6 else None
        return None
    return None


def _value(leaf: value_ends.ValueText) -> str | None:
    """A value's text begun and not ended, as ValueText waits on it: no character that may
    begin a marker; trailing whitespace (left for the closing); then the beginning of a
    marker, if any (a stream's chunk ends in `\\n</para`)."""
    lead = leaf.lead
    if len(lead) != 1 or lead in value_ends.SPACE:
        return None
    if any(not marker.lstrip(value_ends.SPACE).startswith(lead) for marker in leaf.markers):
        return None
    beginnings = {marker[:size] for marker in leaf.markers for size in range(1, len(marker))
                  if marker[:size].startswith(lead)}
    body = re.escape(lead)
    return f"((?:[^{body}]*[^{body} \t\r\n])?)({SPACES})((?:" + trie(beginnings) + ")?)"


def trie(texts: set[str]) -> str:
    """A regex of exactly these texts (none empty), one character at a time: re tries an
    alternation's branches one by one, a trie's at most one per character."""
    heads: dict[str, set[str]] = {}
    for text in texts:
        heads.setdefault(text[0], set()).add(text[1:])
    branches = []
    for head in sorted(heads):
        rests = heads[head]
        tails = {rest for rest in rests if rest}
        inner = trie(tails) if tails else ""
        if not inner:
            branches.append(re.escape(head))
        elif "" in rests:
            branches.append(f"{re.escape(head)}(?:{inner})?")
        else:
            branches.append(f"{re.escape(head)}(?:{inner})")
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
