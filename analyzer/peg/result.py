"""What a parse returns: the captured spans in input order, and whether the input was complete."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from analyzer.peg.diagnostics import ParseProblem, problems_of
from analyzer.peg.notes import Notice, notices_of
from analyzer.peg.roles import CONTINUED, PARTIAL, PYTHON, QUOTED, Role
from analyzer.peg.state import Event


@dataclass(frozen=True)
class Captured:
    """One captured span of the input."""

    role: Role
    start: int
    end: int
    text: str
    partial: bool = False  # input ended inside it: it may still grow
    continued: bool = False  # it continues the previous span of the same capture
    python: bool = False  # a python-dict flavoured value
    quoted: bool = False  # a JSON string literal, quotes included
    info: Any = None  # what the grammar attached for the mapper (e.g. the argument's schema)

    def to_dict(self) -> dict[str, Any]:
        """Return the canonical JSON form (info omitted: it belongs to the grammar)."""
        return {
            "role": self.role.value,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "partial": self.partial,
        }


def captured(event: Event, text: str, offset: int = 0) -> Captured:
    """Turn an internal event into a Captured span (positions shifted by offset)."""
    role, start, end, flags, info = event
    return Captured(
        role=role,
        start=start + offset,
        end=end + offset,
        text=text[start:end],
        partial=bool(flags & PARTIAL),
        continued=bool(flags & CONTINUED),
        python=bool(flags & PYTHON),
        quoted=bool(flags & QUOTED),
        info=info,
    )


@dataclass(frozen=True)
class ParseResult:
    """The captures of one parse; `complete` is False when partial input ended mid-way."""

    text: str
    events: tuple[Event, ...] = field(repr=False)  # raw captures, for fast mapping
    complete: bool

    @classmethod
    def of(cls, text: str, events: tuple[Event, ...], complete: bool) -> ParseResult:
        """Build a result as __init__ does, without a call to object.__setattr__ per field
        (a whole parse builds one per output)."""
        result = object.__new__(cls)
        result.__dict__.update(text=text, events=events, complete=complete)
        return result

    @cached_property
    def captures(self) -> tuple[Captured, ...]:
        """Return the captured spans in input order."""
        return tuple(captured(event, self.text) for event in self.events)

    @cached_property
    def problems(self) -> tuple[ParseProblem, ...]:
        """Return where text was kept as text although a marker in it promised more."""
        return tuple(problems_of(self.events, self.text))

    @cached_property
    def notices(self) -> tuple[Notice, ...]:
        """Return where text was read although it departs from the template's form."""
        return tuple(notices_of(self.events, self.text))

    def by_role(self, role: Role) -> tuple[Captured, ...]:
        """Return the captures of one role, in input order."""
        return tuple(c for c in self.captures if c.role == role)

    def to_dict(self) -> dict[str, Any]:
        """Return the canonical JSON form."""
        return {"complete": self.complete, "captures": [c.to_dict() for c in self.captures]}
