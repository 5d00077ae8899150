"""Diagnostics: where text was kept as text although a marker in it promised more.

A grammar that never loses data keeps a call marker that starts no valid call as plain text
(`<tool_call>{"name": "unknown_fn"...` stays content). That is not an error, but a reader
wants to know why: `kept_as_text(item, attempt)` matches item and, when attempt fails there,
records a PROBLEM event saying where attempt failed, what it expected and what it found.
The message does not change; the parse result and the stream list the problems.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from analyzer.peg.errors import (
    CONTEXT_WIDTH,
    caret_context,
    found_at,
    found_size,
    line_and_column,
)
from analyzer.peg.expressions import Expr, Wrapper
from analyzer.peg.notes import FOUND_SHOWN, Notice, notice_of
from analyzer.peg.roles import Role
from analyzer.peg.state import FAIL, Event, MatchState


@dataclass(frozen=True)
class ParseProblem:
    """Text kept as text because what a marker started did not parse."""

    offset: int  # where the attempt failed
    line: int
    column: int
    expected: tuple[str, ...]
    found: str
    rule: str  # the innermost named rule that failed ("" when none)
    kept: str  # the start of the text kept as text (the marker)
    kept_offset: int  # where that text starts
    context: str  # the failing line with a caret under the offset

    @property
    def message(self) -> str:
        """Say what was kept as text and why, in one line."""
        wanted = " or ".join(self.expected) if self.expected else "something else"
        in_rule = f" in rule `{self.rule}`" if self.rule else ""
        return (f"`{self.kept}` at offset {self.kept_offset} kept as text: expected {wanted} "
                f"at offset {self.offset} (line {self.line}, column {self.column}){in_rule}, "
                f"found {self.found}")

    def shifted(self, before: str) -> ParseProblem:
        """Return the problem placed after `before` is removed from the front of the text."""
        line = self.line - before.count("\n")
        column = self.column - (len(before) - before.rfind("\n") - 1) if line == 1 else self.column
        return ParseProblem(self.offset - len(before), line, column, self.expected, self.found,
                            self.rule, self.kept, self.kept_offset - len(before), self.context)

    def to_dict(self) -> dict[str, Any]:
        """Return the canonical JSON form."""
        return {"offset": self.offset, "line": self.line, "column": self.column,
                "expected": list(self.expected), "found": self.found, "rule": self.rule,
                "kept": self.kept, "kept_offset": self.kept_offset, "context": self.context,
                "message": self.message}


@dataclass(frozen=True)
class Failure:
    """Why an attempt failed: the farthest position, what was expected there, in which rule."""

    offset: int
    expected: tuple[str, ...]
    rule: str


class KeptAsText(Wrapper):
    """Match item (text kept as text); if attempt fails where item starts, record why.

    With progress=True only a failure past the start counts (an attempt that fails at once
    was not an attempt: plain text). It starts, ends and commits where item does (attempt
    runs on a scratch state, and its event goes with item's failure): a Wrapper."""

    __slots__ = ("item", "attempt", "progress")

    def __init__(self, item: Expr, attempt: Expr, progress: bool = False) -> None:
        self.item = item
        self.attempt = attempt
        self.progress = progress

    def match(self, st: MatchState, pos: int) -> int:
        before = len(st.events)
        failure = failure_of(self.attempt, st, pos, pos + 1 if self.progress else pos)
        if failure is not None:
            st.events.append((Role.PROBLEM, pos, pos, 0, failure))
        end = self.item.match(st, pos)
        if end == FAIL:
            del st.events[before:]
        elif end >= 0 and failure is not None:
            st.events[before] = (Role.PROBLEM, pos, end, 0, failure)  # now the kept span is known
        return end

    def describe(self) -> str:
        return self.item.describe()

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def prefix(self) -> tuple[str, bool]:
        return self.item.prefix()


def failure_of(attempt: Expr, st: MatchState, pos: int, least: int) -> Failure | None:
    """Run attempt at pos on its own; say where it failed if it failed at least at least."""
    scratch = MatchState(st.text, st.partial)
    if attempt.match(scratch, pos) != FAIL or scratch.fail_pos < least:
        return None
    rules = [rule for _, rule in scratch.expected if rule]
    expected = tuple(dict.fromkeys(item for item, _ in scratch.expected))
    offset, expected = past_shared_start(st.text, scratch.fail_pos, expected)
    return Failure(offset, expected, rules[-1] if rules else "")


def past_shared_start(
    text: str, offset: int, expected: tuple[str, ...]
) -> tuple[int, tuple[str, ...]]:
    """Move a failure past a marker every expected literal starts with and the text has.

    `<function=get_weather` expected where `<function=delete_all` stands fails, more usefully,
    at `delete_all` with `get_weather` expected. Only whole marker pieces are skipped (up to a
    non-word character): `get_weather` expected at `get_wether` stays as it is."""
    literals = [item[1:-1] for item in expected if len(item) > 2 and item[0] == item[-1] == "`"]
    if not literals or len(literals) != len(expected):
        return offset, expected
    shared = len(os.path.commonprefix([*literals, text[offset : offset + len(literals[0])]]))
    while shared and (literals[0][shared - 1].isalnum() or literals[0][shared - 1] == "_"):
        shared -= 1
    if shared == 0 or any(len(lit) == shared for lit in literals):
        return offset, expected
    return offset + shared, tuple(dict.fromkeys(f"`{lit[shared:]}`" for lit in literals))


KEPT_SHOWN = 40  # how much of the kept text a problem quotes


def problem_of(event: Event, text: str, origin: tuple[int, int, int] = (0, 1, 1)) -> ParseProblem:
    """Describe a PROBLEM event; origin is (offset, line, column) of text[0] in the whole input."""
    _, start, end, _, failure = event
    base_offset, base_line, base_column = origin
    line, column = line_and_column(text, failure.offset)
    kept = text[start : end if end > start else failure.offset].split("\n")[0][:KEPT_SHOWN]
    return ParseProblem(
        offset=base_offset + failure.offset,
        line=base_line + line - 1,
        column=base_column + column - 1 if line == 1 else column,
        expected=failure.expected,
        found=found_at(text, failure.offset, failure.expected),
        rule=failure.rule,
        kept=kept,
        kept_offset=base_offset + start,
        context=caret_context(text, failure.offset),
    )


def seen_enough(text: str, event: Event) -> bool:
    """Tell whether text shows all a PROBLEM event's description quotes (its line's end, or
    as much as the caret context and the found snippet show)."""
    if event[0] is Role.DEVIATION:  # quotes its own span, then the caret line
        offset, need = event[1], max(CONTEXT_WIDTH, FOUND_SHOWN) + 1
    else:
        failure: Failure = event[4]
        offset, need = failure.offset, max(CONTEXT_WIDTH, found_size(failure.expected)) + 1
    return len(text) >= offset + need or "\n" in text[offset:]


def moved(event: Event, by: int) -> Event:
    """Return a PROBLEM (or DEVIATION) event for a text with `by` more characters in front."""
    role, start, end, flags, info = event
    if role is Role.PROBLEM:
        info = Failure(info.offset + by, info.expected, info.rule)
    return (role, start + by, end + by, flags, info)


def problems_of(
    events: tuple[Event, ...] | list[Event], text: str, origin: tuple[int, int, int] = (0, 1, 1)
) -> list[ParseProblem]:
    """Describe the PROBLEM events among events."""
    return [problem_of(e, text, origin) for e in events if e[0] is Role.PROBLEM]


class ProblemWatch:
    """Collect the problems (and deviation notices) of a stream, each once the text it
    quotes has arrived.

    A stream learns of a problem as soon as it is certain, often right after the offending
    character; its found snippet and caret line are built once the line is complete (or
    enough of it came, or the stream ends), so they read as in a one-shot parse. The part of
    the line the stream has already dropped is kept here (at most LINE_HEAD characters)."""

    LINE_HEAD = 256

    def __init__(self) -> None:
        self.line_head = ""  # the current line's text before the stream's buffer
        self.pending: list[tuple[Event, str, tuple[int, int, int]]] = []
        self.found: list[ParseProblem] = []
        self.notices: list[Notice] = []

    def received(self, chunk: str) -> None:
        """Add a chunk to the text of the problems still waiting for theirs."""
        self.pending = [(event, text + chunk, origin) for event, text, origin in self.pending]

    def noted(self, events: list[Event], buffer: str,
              origin: Callable[[], tuple[int, int, int]]) -> None:
        """Take the PROBLEM and DEVIATION events among a run's final events (positions in
        buffer); origin gives where buffer starts (asked only when there is one: it counts
        lines and may give the watch more dropped text first)."""
        for event in events:
            if event[0] is Role.PROBLEM or event[0] is Role.DEVIATION:
                offset, line, column = origin()
                head = len(self.line_head)
                start = (offset - head, line, column - head)
                self.pending.append((moved(event, head), self.line_head + buffer, start))

    def dropped(self, gone: str) -> None:
        """Remember the end of the text the stream dropped from its buffer."""
        line = self.line_head + gone
        self.line_head = line[line.rfind("\n") + 1 :][-self.LINE_HEAD :]

    def settle(self, final: bool) -> None:
        """Describe the problems whose text is complete (all of them when final)."""
        waiting = []
        for event, text, origin in self.pending:
            if not (final or seen_enough(text, event)):
                waiting.append((event, text, origin))
            elif event[0] is Role.DEVIATION:
                self.notices.append(notice_of(event, text, origin))
            else:
                self.found.append(problem_of(event, text, origin))
        self.pending = waiting
