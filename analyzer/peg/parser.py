"""A parser: a grammar's root rule, with one-shot parsing, resumable runs and a readable dump."""

from __future__ import annotations

from typing import Any

from analyzer.peg.errors import PegParseError
from analyzer.peg.expressions import Expr, Rule, sequence
from analyzer.peg.result import ParseResult
from analyzer.peg.scanning import End
from analyzer.peg.state import FAIL, NEED, Event, MatchState


class Run:
    """The outcome of matching an expression against (the tail of) an input.

    A plain slotted class, not a frozen dataclass: a stream makes one per chunk."""

    __slots__ = ("state", "outcome")

    def __init__(self, state: MatchState, outcome: int) -> None:
        self.state = state
        self.outcome = outcome  # end position, or NEED

    @property
    def needs_more(self) -> bool:
        """Tell whether the input ended before the grammar did."""
        return self.outcome == NEED

    def final_events(self) -> list[Event]:
        """Return the events no later input can change."""
        if not self.needs_more:
            return self.state.events
        return self.state.events[: self.state.commit_events]

    def certain_events(self) -> list[Event]:
        """Return final events plus unfinished ones that can only grow (not be withdrawn)."""
        if not self.needs_more:
            return self.state.events
        return self.state.events[: self.state.unsafe_from]


def run(
    expr: Expr, text: str, pos: int, partial: bool, origin: tuple[int, int, int] = (0, 1, 1),
    memo: dict[Any, Any] | None = None, ended: bool = False,
) -> Run:
    """Match expr at pos; raise PegParseError with a trace if the input does not match.

    origin is (offset, line, column) of text[0] in the whole input, for the trace; memo keeps
    a stream's undecided lookaheads from one chunk to the next. ended (with partial): the
    text ends for good, only what it ends inside waits (`MatchState.ended`).

    The run records no failures; only a failed one is run again, recording them for the
    trace (without the memo, which the first run has moved on: a lookahead matched again from
    its start ends the same way)."""
    return Run(*matched(expr, text, pos, partial, origin, memo, ended))


def matched(
    expr: Expr, text: str, pos: int, partial: bool, origin: tuple[int, int, int],
    memo: dict[Any, Any] | None, ended: bool = False,
) -> tuple[MatchState, int]:
    """Do what run does; return the state and the outcome (a stream's per-chunk form)."""
    st = MatchState(text, partial, memo, origin[0], traced=False)
    st.ended = ended
    outcome = expr.match(st, pos)
    if outcome == FAIL:
        raise failure(expr, text, pos, partial, origin)
    return st, outcome


def failure(
    expr: Expr, text: str, pos: int, partial: bool, origin: tuple[int, int, int]
) -> PegParseError:
    """Return the error of a run that failed: the run again, recording its failures (without
    the memo, which the first run has moved on: a lookahead matched again from its start ends
    the same way)."""
    traced = MatchState(text, partial, None, origin[0])
    expr.match(traced, pos)
    return trace(traced, *origin)


def trace(
    st: MatchState, base_offset: int = 0, base_line: int = 1, base_column: int = 1
) -> PegParseError:
    """Build the error for a failed run from its farthest failure."""
    offset = max(st.fail_pos, 0)
    expected = tuple(dict.fromkeys(item for item, _ in st.expected))
    rules = [rule for _, rule in st.expected if rule]
    return PegParseError(
        text=st.text,
        offset=offset,
        expected=expected,
        rule=rules[-1] if rules else "",
        base_offset=base_offset,
        base_line=base_line,
        base_column=base_column,
    )


class Parser:
    """A grammar ready to parse whole or partial outputs."""

    def __init__(self, root: Expr, name: str = "root") -> None:
        self.root = root if isinstance(root, Rule) else Rule(name, root)
        self.start = sequence(self.root, End())

    def parse(self, text: str, partial: bool = False) -> ParseResult:
        """Parse text; with partial=True the text may stop anywhere and only what is certain
        is returned."""
        st = MatchState(text, partial, traced=False)  # matched(), one call less per parse
        outcome = self.start.match(st, 0)
        if outcome == FAIL:
            traced = MatchState(text, partial)
            self.start.match(traced, 0)
            raise trace(traced)
        if outcome != NEED:
            return ParseResult.of(text, tuple(st.events), True)
        return ParseResult.of(text, tuple(st.events[: st.unsafe_from]), False)

    def dump(self) -> str:
        """Return the grammar as readable PEG rules, the root first."""
        return dump_rules(self.root)


def dump_rules(root: Rule) -> str:
    """List every named rule reachable from root as `name <- definition`."""
    rules: dict[str, Rule] = {}
    pending: list[Expr] = [root]
    seen: set[int] = set()
    while pending:
        expr = pending.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        if isinstance(expr, Rule) and expr.name not in rules:
            rules[expr.name] = expr
        pending.extend(reversed(expr.children()))
    return "\n".join(f"{name} <- {_body(rule)}" for name, rule in rules.items())


def _body(rule: Rule) -> str:
    """Describe a rule's definition (not just its name)."""
    return rule.body.describe() if rule.body is not None else "<undefined>"
