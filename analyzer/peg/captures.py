"""Capture expressions: tag what an expression matched with the role it plays in the message.

A leaf capture records one event (role, start, end, flags, info) when its item matches. If the
input ends inside it, it records what is certain as a PARTIAL event and, when the item can be
resumed past its start (text up to a marker, a half-scanned JSON value), splits itself: the
part before the resume point is final, the resumed capture is marked CONTINUED.
A tool capture records TOOL_OPEN before its item and TOOL_CLOSE after it.
"""

from __future__ import annotations

from typing import Any

from analyzer.peg.expressions import (
    RESUME_TABLES,
    Expr,
    Sequence,
    Wrapper,
    head_and_tail,
    keep_resume,
    resumed_sequence,
)
from analyzer.peg.json_values import STRING, JsonString, JsonValue, SchemaValue
from analyzer.peg.roles import CONTINUED, PARTIAL, PYTHON, QUOTED, Role
from analyzer.peg.scanning import Literal, Until
from analyzer.peg.state import NEED, MatchState


def value_flags(item: Expr) -> int:
    """Return the flags that tell the mapper how to read what item matches."""
    if isinstance(item, (JsonValue, SchemaValue)) and item.python:
        return PYTHON
    if isinstance(item, JsonString):
        return QUOTED
    return 0


class Capture(Wrapper):
    """Tag the text matched by item with a role (and info for the mapper, e.g. a schema)."""

    __slots__ = ("role", "item", "info", "flags")

    def __init__(self, role: Role, item: Expr, info: Any = None, flags: int | None = None) -> None:
        self.role = role
        self.item = item
        self.info = info
        self.flags = value_flags(item) if flags is None else flags

    def match(self, st: MatchState, pos: int) -> int:
        before = len(st.events)
        end = self.item.match(st, pos)
        if end >= 0:
            st.events.append((self.role, pos, end, self.flags, self.info))
        elif end == NEED:
            self._record_partial(st, pos, before)
        return end

    def _record_partial(self, st: MatchState, pos: int, before: int) -> None:
        """Record the certain part, split off a final piece when the item resumes later."""
        resume_at, events = st.resume_pos, len(st.events)
        if resume_at > pos and st.commit_events != events:
            # Inner events are tentative: redo the whole capture from its start.
            st.resume, st.resume_pos = self, pos
            st.commit_events = min(st.commit_events, before)
            return
        flags, start = self.flags, pos
        if resume_at > pos:
            st.events.append((self.role, pos, resume_at, flags | PARTIAL, self.info))
            st.commit_events = events + 1
            flags, start = flags | CONTINUED, resume_at
        if st.need_end > start:
            st.events.append((self.role, start, st.need_end, flags | PARTIAL, self.info))
        resume = st.resume
        if resume is self.item and flags == self.flags:
            st.resume = self
            return
        # One object per capture of what the item left (see expressions.RESUMES_KEPT); the
        # info by identity (it may not hash), kept alive by the capture the table holds.
        key = (self.role, resume, flags, id(self.info))
        st.resume = _CAPTURES.get(key) or keep_resume(
            _CAPTURES, key, Capture(self.role, resume, self.info, flags))

    def describe(self) -> str:
        return f"{self.role.value}<{self.item.describe()}>"

    def first_leaf(self) -> Expr | None:
        return self.item.first_leaf()

    def may_fail(self, text: str, pos: int) -> bool:
        return self.item.may_fail(text, pos)

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def prefix(self) -> tuple[str, bool]:
        return self.item.prefix()


class LiteralCapture(Capture):
    """A capture of one literal (a function or parameter name): matched and recorded in one
    step where it is there; anything else goes the general way."""

    __slots__ = ("literal",)

    def __init__(self, role: Role, item: Literal, info: Any = None) -> None:
        super().__init__(role, item, info)
        self.literal = item.text

    def match(self, st: MatchState, pos: int) -> int:
        literal = self.literal
        if st.text.startswith(literal, pos):
            end = pos + len(literal)
            st.events.append((self.role, pos, end, self.flags, self.info))
            return end
        return Capture.match(self, st, pos)


class UntilCapture(Capture):
    """A capture of the text up to markers (content, reasoning): in a whole run where no
    earlier chunk searched ahead (no memo), found and recorded in one step (Until in a whole
    run never fails nor waits: it ends at the first marker or at the end)."""

    __slots__ = ()

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.memo:  # Capture.match, inlined: a stream runs it at every chunk
            before = len(st.events)
            end = self.item.match(st, pos)
            if end >= 0:
                st.events.append((self.role, pos, end, self.flags, self.info))
            elif end == NEED:
                self._record_partial(st, pos, before)
            return end
        hit = self.item.pattern.search(st.text, pos)  # type: ignore[attr-defined]
        end = hit.start() if hit else st.n
        st.events.append((self.role, pos, end, self.flags, self.info))
        return end


class StringCapture(Capture):
    """A capture of one JSON string (a call id): where the string is there whole, matched
    and recorded in one step, as its item would match it; anything else goes the general
    way."""

    __slots__ = ()

    def match(self, st: MatchState, pos: int) -> int:
        found = STRING.match(st.text, pos)
        if found is not None:
            end = found.end()
            st.events.append((self.role, pos, end, self.flags, self.info))
            return end
        return Capture.match(self, st, pos)


# Captures that match their item in one step, by the item's type.
ONE_STEP_CAPTURES: dict[type, type[Capture]] = {
    Literal: LiteralCapture,
    Until: UntilCapture,
    JsonString: StringCapture,
}


def capture_of(role: Role, item: Expr, info: Any = None) -> Capture:
    """Capture item, in one step when it is a plain literal, text up to markers or a JSON
    string."""
    return ONE_STEP_CAPTURES.get(type(item), Capture)(role, item, info)


class ToolCapture(Wrapper):
    """Mark the start and end of one tool call around item."""

    __slots__ = ("item", "opened")

    def __init__(self, item: Expr, opened: bool = False) -> None:
        self.item = item
        self.opened = opened  # TOOL_OPEN was already recorded by an earlier chunk

    def match(self, st: MatchState, pos: int) -> int:
        if not self.opened:
            st.events.append((Role.TOOL_OPEN, pos, pos, 0, None))
        end = self.item.match(st, pos)
        if end >= 0:
            st.events.append((Role.TOOL_CLOSE, end, end, 0, None))
        elif end == NEED and not (self.opened and st.resume is self.item):
            st.resume = _OPENED.get(st.resume) or opened_tool(st.resume)
        elif end == NEED:
            st.resume = self
        return end

    def describe(self) -> str:
        return f"tool<{self.item.describe()}>"

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def prefix(self) -> tuple[str, bool]:
        return self.item.prefix()[0], False


# Kept resume points (see expressions.RESUMES_KEPT): continued captures, opened calls by
# their item, and opened_tool's answers by what the call's item left.
_CAPTURES: dict[tuple[Any, ...], Capture] = {}
_OPENED_CALLS: dict[Expr, ToolCapture] = {}
_OPENED: dict[Expr, Expr] = {}
RESUME_TABLES.extend((_CAPTURES, _OPENED_CALLS, _OPENED))


def opened_tool(item: Expr) -> Expr:
    """Resume an opened tool call, kept flat: TOOL_CLOSE follows the last item, so a sequence's
    head runs bare and an enclosing sequence flattens it into its own items. One object for
    the same item (see expressions.RESUMES_KEPT)."""
    opened: Expr
    if isinstance(item, Sequence):
        head, tail = head_and_tail(item.items)
        opened = resumed_sequence((head, opened_call(tail)))
    else:
        opened = opened_call(item)
    return keep_resume(_OPENED, item, opened)


def opened_call(item: Expr) -> ToolCapture:
    """The call around item, its TOOL_OPEN recorded: one object per item."""
    return _OPENED_CALLS.get(item) or keep_resume(_OPENED_CALLS, item,
                                                  ToolCapture(item, opened=True))
