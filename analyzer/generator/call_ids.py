"""Call ids in tag-based calls: before the name, between name and arguments, or after them.

A template that numbers its calls (Kimi's `functions.NAME:0`) names each call by that whole
token, and tool results refer to it; so the token is the call's id.
"""

from __future__ import annotations

import re

from analyzer import peg as p
from analyzer.generator.build import Build, lit
from analyzer.model import CallIdPosition
from analyzer.parsing.mapper import IdInsert
from analyzer.peg import Role
from analyzer.peg.state import FAIL, MatchState

MAX_ID = 128  # longer than any call id a template writes
# The namespace at the end of a name prefix (`functions.` in Kimi's `functions.NAME:0`).
NAMESPACE = re.compile(r"[A-Za-z_]\w*\.$")


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
            if pos < st.fail_pos:
                return FAIL  # not recorded: no message to build
            return st.fail(pos, f"a call id (one token) before `{self.end}`")
        if found >= 0:
            return found
        if st.partial and st.n < reach:
            return st.need(self, pos, pos)
        if pos < st.fail_pos:
            return FAIL  # not recorded: no message to build
        return st.fail(pos, f"a call id (at most {MAX_ID} characters) before `{self.end}`")

    def describe(self) -> str:
        return f"short-id(until {self.end!r})"


def id_between_markers(prefix: str, suffix: str, stop: str, captured: bool = True,
                       json_next: bool = False, markers: tuple[str, ...] = ()) -> p.Expr:
    """Match an optional `prefix ID suffix` (the id runs to suffix, or to stop without one;
    json_next: also to a `{`, where the JSON arguments begin when stop was left out; an id
    without a prefix holds none of markers)."""
    end = suffix.strip() or stop.strip()
    if not end:
        return p.eps()
    if not prefix.strip():  # no opening marker: a short id runs from here
        short = ShortId(end, markers)
        return (p.call_id(short) if captured else short) + lit(suffix)
    ends = (end, "{") if json_next and not suffix.strip() else (end,)
    ident = p.call_id(p.until(*ends)) if captured else p.until(*ends)
    return p.optional(lit(prefix) + ident + lit(suffix))


def id_at(b: Build, position: CallIdPosition, captured: bool = True,
          json_next: bool = False) -> p.Expr:
    """Match the call id the template writes at this position (nothing elsewhere).

    json_next: JSON arguments follow, so an id running to the arguments' start marker also
    ends at a `{` (a model may leave that marker out)."""
    tools = b.analysis.tools
    ident = tools.call_id
    if ident.pos != position:
        return p.eps()
    # An id written before the name runs to the name; elsewhere, to the arguments.
    stop = (tools.function.name_prefix if position == CallIdPosition.PRE_FUNC_NAME
            else tools.arguments.start)
    json_next = json_next and position == CallIdPosition.BETWEEN_FUNC_AND_ARGS
    fmt = tools.format
    markers = (fmt.section_start.strip(), fmt.per_call_start.strip())
    return id_between_markers(ident.prefix, ident.suffix, stop, captured, json_next, markers)


def named(b: Build, name: str) -> p.Expr:
    """Match name prefix, the function name and the call index, capturing the id they make."""
    index = b.analysis.tools.call_index
    prefix = b.analysis.tools.function.name_prefix.strip()
    namespace = NAMESPACE.search(prefix)
    if not index.present:
        return name_prefix(b, True) + p.tool_name(p.literal(name))
    number = lit(index.prefix) + p.regex(r"[0-9]+", max_length=12) + lit(index.suffix)
    whole = p.call_id(lit(prefix) + p.tool_name(p.literal(name)) + number)
    if namespace is None:
        return whole
    # The id is the template's token: a namespace the model left out is put back in it.
    bare = prefix[: namespace.start()]
    put_back = IdInsert(len(bare), namespace.group())
    missing = lit(bare) + noted_namespace(namespace.group()) + p.tool_name(p.literal(name))
    return p.choice(whole, p.capture(Role.CALL_ID, missing + number, put_back))


def plain_name(b: Build, name: str) -> p.Expr:
    """Match name prefix and function name, without captures (for lookahead)."""
    return name_prefix(b, False) + p.literal(name)


def name_prefix(b: Build, noted: bool) -> p.Expr:
    """Match the name prefix; one whose namespace (`functions.`) is left out is read as
    there (noted: the deviation is recorded where the namespace is missing)."""
    prefix = b.analysis.tools.function.name_prefix.strip()
    found = NAMESPACE.search(prefix)
    if found is None:
        return lit(prefix)
    missing = noted_namespace(found.group()) if noted else p.eps()
    return p.choice(p.literal(prefix), lit(prefix[: found.start()]) + missing)


def noted_namespace(namespace: str) -> p.Expr:
    """Note, where a call's name begins, that its namespace was left out."""
    return p.noted(p.eps(), "missing_namespace", "accepted", f"`{namespace}`")
