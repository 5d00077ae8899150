"""Call ids in tag-based calls: before the name, between name and arguments, or after them.

A template that numbers its calls (Kimi's `functions.NAME:0`) names each call by that whole
token, and tool results refer to it; so the token is the call's id.
"""

from __future__ import annotations

import re

from analyzer import peg as p
from analyzer.generator.build import Build, lit
from analyzer.model import CallIdPosition
from analyzer.peg.state import MatchState

MAX_ID = 128  # longer than any call id a template writes


class ShortId(p.Expr):
    """Match an id of at most MAX_ID characters up to (not including) end.

    An id with no opening marker could otherwise run to any later `end`, through whatever
    text follows the calls: a stream would hold all of it back, re-reading it every chunk.
    Nor may it run back over what comes before the call (a wrapper, the calls' own opening
    markers): an id is one token, with no whitespace inside and none of those markers."""

    __slots__ = ("end", "foreign")

    def __init__(self, end: str, markers: tuple[str, ...] = ()) -> None:
        self.end = end
        inside = [r"\S\s+\S", *(re.escape(m) for m in markers if m)]
        self.foreign = re.compile("|".join(inside))

    def match(self, st: MatchState, pos: int) -> int:
        reach = pos + MAX_ID + len(self.end)
        found = st.text.find(self.end, pos, reach)
        if self.foreign.search(st.text, pos, found if found >= 0 else min(st.n, reach)):
            return st.fail(pos, f"a call id (one token) before `{self.end}`")
        if found >= 0:
            return found
        if st.partial and st.n < reach:
            return st.need(self, pos, pos)
        return st.fail(pos, f"a call id (at most {MAX_ID} characters) before `{self.end}`")

    def describe(self) -> str:
        return f"short-id(until {self.end!r})"


def id_between_markers(prefix: str, suffix: str, stop: str, captured: bool = True,
                       markers: tuple[str, ...] = ()) -> p.Expr:
    """Match an optional `prefix ID suffix` (the id runs to suffix, or to stop without one;
    an id without a prefix holds none of markers)."""
    end = suffix.strip() or stop.strip()
    if not end:
        return p.eps()
    if not prefix.strip():  # no opening marker: a short id runs from here
        short = ShortId(end, markers)
        return (p.call_id(short) if captured else short) + lit(suffix)
    ident = p.call_id(p.until(end)) if captured else p.until(end)
    return p.optional(lit(prefix) + ident + lit(suffix))


def id_at(b: Build, position: CallIdPosition, captured: bool = True) -> p.Expr:
    """Match the call id the template writes at this position (nothing elsewhere)."""
    tools = b.analysis.tools
    ident = tools.call_id
    if ident.pos != position:
        return p.eps()
    # An id written before the name runs to the name; elsewhere, to the arguments.
    stop = (tools.function.name_prefix if position == CallIdPosition.PRE_FUNC_NAME
            else tools.arguments.start)
    fmt = tools.format
    markers = (fmt.section_start.strip(), fmt.per_call_start.strip())
    return id_between_markers(ident.prefix, ident.suffix, stop, captured, markers)


def named(b: Build, name: str) -> p.Expr:
    """Match name prefix, the function name and the call index, capturing the id they make."""
    fun, index = b.analysis.tools.function, b.analysis.tools.call_index
    name_part = lit(fun.name_prefix) + p.tool_name(p.literal(name))
    if not index.present:
        return name_part
    number = lit(index.prefix) + p.regex(r"[0-9]+", max_length=12) + lit(index.suffix)
    return p.call_id(name_part + number)


def plain_name(b: Build, name: str) -> p.Expr:
    """Match name prefix and function name, without captures (for lookahead)."""
    return lit(b.analysis.tools.function.name_prefix) + p.literal(name)
