"""Notes: where a grammar read text that departs from the template's exact form.

A tolerant grammar accepts what real models write (a doubled `<think>`, a missing closing
tag, an end-of-sequence text) but must not accept it in silence: `noted(item, note)` matches
item and records a DEVIATION event carrying the note (what departed, what the grammar did,
what the template's form has there). The engine knows notes only as strings; the parsing
layer turns them into `analyzer.parsing.deviations.Deviation`s.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.peg.errors import caret_context, line_and_column
from analyzer.peg.expressions import Expr, Wrapper
from analyzer.peg.roles import Role
from analyzer.peg.state import FAIL, Event, MatchState

FOUND_SHOWN = 40  # how much of the departing text a notice quotes


@dataclass(frozen=True, slots=True)
class Note:
    """What a tolerance reads: its kind, what it does with the text, what the template has."""

    kind: str
    action: str
    expected: str


@dataclass(frozen=True)
class Notice:
    """A note placed in the input: offset, 1-based line and column, the text found there."""

    note: Note
    offset: int
    line: int
    column: int
    found: str
    context: str  # the line with a caret under the offset


class Noted(Wrapper):
    """Match item; when it matches, record a DEVIATION event where it starts.

    The event goes in before item runs, so it is final as soon as anything inside is (a
    stream that commits inside item has already noted it)."""

    __slots__ = ("item", "note")

    def __init__(self, item: Expr, note: Note) -> None:
        self.item = item
        self.note = note

    def match(self, st: MatchState, pos: int) -> int:
        before = len(st.events)
        st.events.append((Role.DEVIATION, pos, pos, 0, self.note))
        end = self.item.match(st, pos)
        if end == FAIL:
            del st.events[before:]
        elif end >= 0:
            st.events[before] = (Role.DEVIATION, pos, end, 0, self.note)
        elif st.resume_pos == pos:
            # Rerun from here with the note still attached (nothing inside became final).
            del st.events[before:]
            st.commit_events = min(st.commit_events, before)
            st.resume = self if st.resume is self.item else Noted(st.resume, self.note)
        return end

    def describe(self) -> str:
        return f"noted[{self.note.kind}]({self.item.describe()})"

    # Where the item matches anywhere or waits, so does this (its event is the item's
    # outcome's; a held choice that does not run it keeps none), and may fail as any
    # expression may.

    def matches_anywhere(self) -> bool:
        return self.item.matches_anywhere()

    def waiting_form(self) -> str | None:
        return self.item.waiting_form()

    def first_leaf(self) -> Expr | None:
        return self.item.first_leaf()

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def prefix(self) -> tuple[str, bool]:
        return self.item.prefix()


def shown(text: str) -> str:
    """Quote departing text on one line (`end of input` for nothing)."""
    if not text:
        return "end of input"
    return "`" + text[:FOUND_SHOWN].replace("\n", "\\n") + "`"


def found_at(text: str, start: int) -> str:
    """Quote what stands at start: up to FOUND_SHOWN characters, up to the line's end (so a
    stream, which settles a notice once its line is complete, quotes the same)."""
    snippet = text[start : start + FOUND_SHOWN]
    newline = snippet.find("\n")
    return shown(snippet[: newline + 1] if newline >= 0 else snippet)


def notice_of(event: Event, text: str, origin: tuple[int, int, int] = (0, 1, 1)) -> Notice:
    """Describe a DEVIATION event; origin is (offset, line, column) of text[0] in the input."""
    _, start, _, _, note = event
    base_offset, base_line, base_column = origin
    line, column = line_and_column(text, start)
    return Notice(note, base_offset + start, base_line + line - 1,
                  base_column + column - 1 if line == 1 else column,
                  found_at(text, start), caret_context(text, start))


def notices_of(events: tuple[Event, ...] | list[Event], text: str,
               origin: tuple[int, int, int] = (0, 1, 1)) -> list[Notice]:
    """Describe the DEVIATION events among events."""
    return [notice_of(e, text, origin) for e in events if e[0] is Role.DEVIATION]
