"""Mutable bookkeeping of one match run (positions, captured events, failures, resume point)."""

from __future__ import annotations

from typing import Any, Protocol

from analyzer.peg.roles import Role

# Match outcomes other than an end position (which is >= 0).
FAIL = -1
NEED = -2

# An event: (role, start, end, flags, info). Plain tuples: built in the hot loop.
Event = tuple[Role, int, int, int, Any]

# The farthest failure of a run that does not record failures: every failure is behind it,
# so `fail` (and the checks before it) return at once. A run records failures only when a
# trace is wanted (see parser.run): most runs never fail, and a failing one is run again.
UNTRACED = 1 << 62


class Resumable(Protocol):
    """What a match run resumes from: any expression (`expressions.Expr` satisfies it).

    A protocol rather than the expression class itself: the expressions import this module,
    and naming their class here would close an import cycle.
    """

    def match(self, st: MatchState, pos: int) -> int:
        """Match at pos; return the end position, FAIL or NEED."""
        ...


class MatchState:
    """Everything a match run reads and writes besides the expression tree."""

    __slots__ = (
        "text",
        "n",
        "partial",
        "events",
        "commits",
        "resume",
        "resume_pos",
        "commit_events",
        "need_end",
        "unsafe_from",
        "fail_pos",
        "expected",
        "rules",
        "memo",
        "base",
        "leaf",
        "shaky",
        "ended",
    )

    def __init__(
        self, text: str, partial: bool, memo: dict[Any, Any] | None = None, base: int = 0,
        traced: bool = True,
    ) -> None:
        self.text = text
        self.n = len(text)
        self.partial = partial
        # A stream's lookaheads left undecided by earlier chunks: where to go on from
        # (keyed by expression and absolute position; base is text[0]'s absolute offset).
        self.memo = memo
        self.base = base
        self.events: list[Event] = []
        self.commits = 0
        # Filled when a match returns NEED: the expression that continues the parse from
        # resume_pos, the number of events that are final, how far the input was understood.
        # Typed Any, not Resumable: every frame a NEED unwinds through reads it back as the
        # expression it is (see expressions.resumed), and a check per frame costs a call.
        self.resume: Any = None
        self.resume_pos = 0
        self.commit_events = 0
        self.need_end = 0
        self.unsafe_from = 1 << 62
        # The leaf whose input ran out (the last need()): a stream asks it which characters
        # could change its outcome (`wake`) to skip runs that cannot change anything.
        self.leaf: Resumable | None = None
        # Set when a choice was held open by an alternative more input may still fail (or
        # contradict): a stream must run again, not assume the hold repeats.
        self.shaky = False
        # A partial run over a text that ends for good (a break at the end of a finished
        # output): only a leaf the text ends inside waits; a number or a lookahead that
        # waits for what more text could say decides as a whole run would.
        self.ended = False
        self.fail_pos = -1 if traced else UNTRACED
        self.expected: list[tuple[str, str]] = []
        self.rules: list[str] = []

    def rerun(self, expr: Resumable, text: str, partial: bool, memo: dict[Any, Any] | None,
              base: int) -> int:
        """Match expr at 0 on a new text, recording no failures, this state first reset as
        __init__ leaves an untraced one; return the outcome.

        A stream runs once per chunk: one state kept and reset costs less than a state built
        (and a frame less than building it and then matching)."""
        self.text = text
        self.n = len(text)
        self.partial = partial
        self.memo = memo
        self.base = base
        self.events = []
        self.commits = 0
        self.resume = None
        self.resume_pos = self.commit_events = self.need_end = 0
        self.unsafe_from = 1 << 62
        self.leaf = None
        self.shaky = False
        # fail_pos stays UNTRACED, expected and rules empty: an untraced run never writes them
        return expr.match(self, 0)

    def need(self, resume: Resumable, resume_pos: int, need_end: int) -> int:
        """Record that input ended inside a leaf; return NEED."""
        self.resume = resume
        self.resume_pos = resume_pos
        self.need_end = need_end
        self.commit_events = len(self.events)
        self.leaf = resume
        return NEED

    def hold_back(self, resume: Resumable, start: int, events_at_start: int) -> int:
        """Record that a frame cannot commit past its start: its events are not certain yet."""
        self.resume = resume
        self.resume_pos = start
        self.commit_events = events_at_start
        if events_at_start < self.unsafe_from:
            self.unsafe_from = events_at_start
        return NEED

    def fail(self, pos: int, expected: str) -> int:
        """Remember the farthest failure for the error trace; return FAIL."""
        if pos >= self.fail_pos:
            if pos > self.fail_pos:
                self.fail_pos = pos
                self.expected = []
            self.expected.append((expected, self.rules[-1] if self.rules else ""))
        return FAIL
