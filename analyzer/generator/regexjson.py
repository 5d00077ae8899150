"""Stream runs of a loop of calls whose heads are markup, decided by regexes (issue 11,
session 12).

Kimi-K2 writes a call as `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>`
then its JSON arguments. A 16-byte stream runs the tree three times per call from the loop of
calls: at the token alone, at the token and a beginning of the head, and at the whole head
with the value not begun (the special tokens are whole chunks). `regexrun.CallsSegment` reads
calls whose heads are `LeadRun`s in a `DispatchOrElse`, and keys a whole head by its text:
here the head holds the call's index, a new text at every call, so each would be a new key.

`JsonCallsSegment` reads a loop of calls (`(space TOKEN (CALL_1 | ... ) ...)*`, the token
required or optional, the calls a `Dispatch` over rules) whose calls are `ToolCapture`s of a
sequence of items a regex reads exactly as the tree does (`head_pattern`): literals, names
captured, captures and notes of those, whitespace, a `Regex` (a call's index, read as its own
atomic group: the key holds only whether it is empty), a negative lookahead of a regex, a
commit, a choice (its first alternative: the one the tree takes where it matches), up to an
item the text ends at (the value ahead: a JSON value, whatever its kind). Every part is a
group, so every position a run reports is a part's start or end; the key holds which call,
the whitespace parts' texts (a `Regex` waiting near the end reads how far the end is) and
which variable parts are empty. The outcome is learned by `regexrun.Shapes` as for the other
segments (the same kept objects on a second tree run, or never decided).

Nothing here is by format: any loop of calls whose call items are of these kinds gains.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from analyzer.generator import regexrun
from analyzer.generator.build import (
    Closing,
    Dispatch,
    DispatchByBeginnings,
    LedLoop,
    SpacedLiteral,
    beginnings,
)
from analyzer.parsing.stream import GRAMMAR_CHECKS, SHAPE_BUILDERS
from analyzer.peg.captures import Capture, LiteralCapture, ToolCapture
from analyzer.peg.expressions import (
    RESUME_DEPENDENTS,
    Choice,
    Commit,
    Eps,
    Expr,
    Not,
    Optional,
    Repeat,
    Rule,
    Sequence,
)
from analyzer.peg.notes import Noted
from analyzer.peg.scanning import Literal, Regex, Space, Token

ENDED, OTHER = regexrun.ENDED, regexrun.OTHER
SPACES = "([ \t\r\n]*+)"  # a whitespace part (Space reads all of it)

# What a part of a head is, for the key: its text is fixed by the regex (a literal), its
# text is in the key (whitespace), or only whether it is empty is (a regex's text).
FIXED, SPACE, VARIABLE = 0, 1, 2


class HeadPattern:
    """One call's head as a regex of parts (one group each) and what each part is."""

    __slots__ = ("regex", "kinds", "fixed", "spaces", "variables")

    def __init__(self, source: str, kinds: tuple[int, ...]) -> None:
        self.regex = re.compile(source)
        self.kinds = kinds
        self.fixed = tuple(group for group, kind in enumerate(kinds, 1) if kind == FIXED)
        self.spaces = tuple(group for group, kind in enumerate(kinds, 1) if kind == SPACE)
        self.variables = tuple(group for group, kind in enumerate(kinds, 1)
                               if kind == VARIABLE)


class JsonCallsSegment(regexrun.CallsSegment):
    """The loop of calls (`CallsSegment`'s token), each call's head read by its
    `HeadPattern` to the end of the text: the value ahead not begun (ENDED); or a beginning
    of a head's dispatch text (ENDED)."""

    __slots__ = ("heads",)

    def __init__(self, token: str, after: bool, dispatch: re.Pattern[str],
                 heads: dict[str, HeadPattern], fragments: frozenset[str],
                 required: bool) -> None:
        super().__init__(token, after, dispatch, {}, fragments, required)
        self.heads = heads  # by the dispatch's text, the call's head

    def read_call(self, text: str, after: int, n: int, spans: list[tuple[int, int]],
                  key: list[Any], fixed: list[int]) -> int:
        lead = self.dispatch.match(text, after)
        if lead is not None:
            called = lead.group()
            head = self.heads.get(called)
            found = None if head is None else head.regex.match(text, after)
            if head is None or found is None or found.end() != n:
                return OTHER
            regs = found.regs
            size = len(spans) - 1  # regs[group] is spans[size + group]
            spans += regs[1:]
            fixed += [size + group for group in head.fixed]
            spaces, variables = head.spaces, head.variables
            key += ("json head", called, found.lastindex,
                    found.group(*spaces) if spaces else None,  # a text, or a tuple of them
                    tuple([regs[group][0] == regs[group][1] for group in variables])
                    if variables else None)
            return ENDED
        return self.head_begun(text, after, n, spans, key, fixed)


def _build(point: Expr) -> regexrun.Shapes | None:
    """The shapes of a point headed by such a loop of calls, or by whitespace or a call's
    closing before it (the chain regexrun reads, with this loop); told from the point's
    first item at once (a point without shapes is asked again at every run)."""
    if point in REFUSED:
        return None
    if type(regexrun.first_item(point)) not in HEADS:
        if len(REFUSED) >= regexrun.BUILT_KEPT:
            REFUSED.clear()
        REFUSED[point] = None
        return None
    segments: list[Any] = []
    for item in regexrun.flat_items(point):
        kind = type(item)
        if kind is Space:
            segments.append(regexrun.SpaceSegment())
            continue
        if kind is Closing or kind is ToolCapture:
            closing = regexrun._closing(item)
            if closing is not None:
                segments.append(closing)
                continue
            return None
        if kind is LedLoop or kind is Repeat:
            calls = json_calls(item)
            if calls is not None:
                segments.append(calls)
                return regexrun.Shapes(tuple(segments))
        return None
    return None


HEADS = (Space, Closing, ToolCapture, LedLoop, Repeat)
# Points refused by their first item: only points streams ran from often are asked (kept
# objects), and one without shapes is asked again at every run (not kept in POINTS), after
# regexrun's builder: MiniMax-M3's 144 runs a stream from such points paid +0.75% for the
# check alone. Starts over with the resume-point tables.
REFUSED: dict[Any, None] = {}
RESUME_DEPENDENTS.append(REFUSED)


@lru_cache(maxsize=regexrun.BUILT_KEPT)
def json_calls(head: Any) -> JsonCallsSegment | None:
    """The loop of calls: `(space TOKEN? (CALL_1 | ... ) ...)*` or with the token required
    (`LedLoop`), the calls a `Dispatch` (by beginnings or not) whose alternatives' heads
    `head_pattern` reads; None: a loop spelled otherwise."""
    items = regexrun.loop_items(head)
    if items is None:
        return None
    required = type(items[1]) is Token
    token: Any = items[1] if required else (
        items[1].item if type(items[1]) is Optional else None)  # `TOKEN?`
    if type(token) is not Token or token.before:
        return None
    dispatch = items[2]
    if type(dispatch) is not DispatchByBeginnings and type(dispatch) is not Dispatch:
        return None
    calls = {}
    alternatives = dispatch.choice.children()
    for lead in dispatch.table:
        alternative = _alternative(dispatch, alternatives, lead)
        pattern = None if alternative is None else head_pattern(alternative)
        if pattern is not None:
            calls[lead] = pattern
    if not calls:
        return None
    fragments = frozenset({"", *(lead[:size] for lead in dispatch.table
                                 for size in range(1, len(lead) + 1))})
    return JsonCallsSegment(token.text, token.after is not None, dispatch.pattern, calls,
                            fragments, required)


def _alternative(dispatch: Any, alternatives: tuple[Expr, ...], lead: str) -> Expr | None:
    """The alternative of the dispatch's choice that a text found by its regex runs: a plain
    dispatch's own, or (by beginnings) the first whose beginnings begin the text."""
    if type(dispatch) is Dispatch:
        return dispatch.table[lead]
    for alternative in alternatives:
        found = beginnings(alternative)
        if found is None:
            return None
        if any(lead.startswith(text) for text in found[0]):
            return alternative
    return None


@lru_cache(maxsize=regexrun.BUILT_KEPT)
def head_pattern(alternative: Expr) -> HeadPattern | None:
    """A call (`Rule` of a `ToolCapture` of a sequence) as the regex of its items up to the
    first item no part reads (the value ahead, or `"[CALL_ID]" call-id<until(...)>`): the
    text ends there, or after one of that item's own first parts read in a row (each in an
    optional group: the key holds how far the text went). None: no such item, or an item
    before it spelled otherwise."""
    call: Any = alternative.body if type(alternative) is Rule else alternative
    if type(call) is not ToolCapture or call.opened or type(call.item) is not Sequence:
        return None
    source: list[str] = []
    kinds: list[int] = []
    looked = [False]  # a lookahead before: a later regex part would move the end it sees
    for item in call.item.items:
        if not _parts(item, source, kinds, looked):
            break
    else:
        return None  # the text must end at an item the parts do not read
    if not any(kind != SPACE for kind in kinds):
        return None
    tails: list[tuple[list[str], list[int]]] = []
    for inner in _leading(item):  # the text may end inside the item, after its first parts
        part: list[str] = []
        part_kinds: list[int] = []
        if not _parts(inner, part, part_kinds, looked) or not part_kinds:
            break
        tails.append((part, part_kinds))
    for part, part_kinds in tails:  # nested: a later part only after the ones before
        source.append("(?:" + "".join(part))
        kinds += part_kinds
    source.append(")?" * len(tails))
    return HeadPattern("".join(source), tuple(kinds))


def _leading(item: Any) -> list[Any]:
    """The items a sequence (in captures, notes, an optional) runs first, in order; [] for
    others."""
    while type(item) is Capture or type(item) is Noted or type(item) is Optional:
        item = item.item
    return list(item.items) if type(item) is Sequence else []


def _parts(item: Any, source: list[str], kinds: list[int], looked: list[bool]) -> bool:
    """Add item's parts (False: item is of no kind read, nothing added)."""
    added = len(source), len(kinds), looked[0]
    if _read(item, source, kinds, looked):
        return True
    del source[added[0]:], kinds[added[1]:]
    looked[0] = added[2]
    return False


def _read(item: Any, source: list[str], kinds: list[int], looked: list[bool]) -> bool:
    """Add the regex of item's parts, one group each, reading what the tree's run reads: a
    `Regex` in an atomic group, whitespace possessive, a choice's first alternative alone
    (where it reads, the tree takes it); a regex part after a lookahead is refused (the
    lookahead's regex waits by how far the text's end is: the key must fix that)."""
    kind = type(item)
    if kind is Literal or kind is LiteralCapture:
        text = item.text if kind is Literal else item.literal
        source.append(f"({re.escape(text)})")
        kinds.append(FIXED)
    elif kind is Token:
        if item.before:
            source.append(SPACES)
            kinds.append(SPACE)
        source.append(f"({re.escape(item.text)})")
        kinds.append(FIXED)
        if item.after is not None:
            source.append(SPACES)
            kinds.append(SPACE)
    elif kind is SpacedLiteral:
        source.append(SPACES + f"({re.escape(item.text)})")
        kinds += (SPACE, FIXED)
    elif kind is Space:
        source.append(SPACES)
        kinds.append(SPACE)
    elif kind is Regex:
        if item.pattern.groups or looked[0]:
            return False
        source.append(f"((?>{item.pattern.pattern}))")
        kinds.append(VARIABLE)
    elif kind is Not:
        if type(item.item) is not Regex or item.item.pattern.groups:
            return False
        source.append(f"(?!{item.item.pattern.pattern})")
        looked[0] = True
    elif kind is Eps or kind is Commit:
        pass
    elif kind is Capture or kind is Noted:
        return _read(item.item, source, kinds, looked)
    elif kind is Sequence:
        return all(_read(inner, source, kinds, looked) for inner in item.items)
    elif kind is Choice:
        # The first alternative: where the regex reads it, the tree takes it too (and a text
        # it does not read is no decided shape: the tree runs).
        return bool(item.alternatives) and _read(item.alternatives[0], source, kinds, looked)
    else:
        return False
    return True


def _has_json_calls(start: Any) -> bool:
    """Whether the grammar holds a loop of calls this module reads."""
    return regexrun.grammar_holds(start, lambda expr: (
        type(expr) is LedLoop or type(expr) is Repeat) and json_calls(expr) is not None)


SHAPE_BUILDERS.append(_build)
GRAMMAR_CHECKS.append(_has_json_calls)
