"""Stream runs decided by the regexes of their kept resume point (issue 11, session 10).

A stream re-runs the grammar from its resume point at every chunk that may change something.
Most runs of a tagged-parameter stream read text of a few shapes: whitespace then part of an
argument's lead (`<param`, `<parameter=na`), a whole lead then the beginning of its value
(`<parameter=name>\\nval`, maybe ending in the first characters of a marker, `\\n</para`),
the end of a value and its closing tag, then the next lead begun or a call's closing markers,
a call's wrapper and head then its first argument begun. For such a text, the run's outcome
(events, resume point, where it resumes and waits, the leaf, the holds) depends only on which
shape it is, the texts of its fixed parts (a lead, a fragment, a marker's beginning, the
whitespace before a closing tag) and which of its variable parts (whitespace, a value's
text) are empty: every position the run reports is a place in one of those parts. Such a
text is *decided* by its shape.

`_build` reads a point's items from its head into a chain of segments (`stream.shapes_of`
asks it once per point: parsing sits under the generator, so this module gives its
builder): whitespace, a separator, a value begun (`ValueSegment`), a call's argument loop
(`LoopSegment`: the loop's own dispatch regex, then per argument its `LeadRun` lead regex,
its separator and its value as `ValueText` reads a partial one; a text that ends inside a
lead longer than the dispatch's, `<arg_key>k</arg_key>\n<arg_va`, read part by part by
`lead_begun`), closing markers and markers after whitespace (`ClosingSegment`: `</tool_call>`,
the `<arg_value>` a run waits on after a key), the loop of calls (`CallsSegment`: the
wrapper token, optional or before every call, a call head, then the call's own segments;
`BareCallsSegment` where the calls have no wrapper). A value may be the last alternative of
a choice whose others begin with its lead character (MiniCPM5's and MiniMax-M2's
`"<![CDATA[" ... | value-text`: `_value_capture`), and an argument's lead may end in one of
several markers before its value (DeepSeek's `string="true">`: `_markers`).
A text the chain does not read to its end inside a segment runs the tree.

The first text of each key (its path through the segments, fixed texts, empty parts) runs
the tree and the outcome is learned: the same objects (`MatchState.resume` and `leaf` are
kept one object per structure; an outcome is kept only where a second tree run gives the
very same ones), every position as a place in the match. Later texts of that key fill the
state from their own spans, without the tree. A key whose outcome has a position at no
place, or that touches the stream's memo, is never decided. The resume-point tables starting
over (`expressions.keep_resume`) start these over too: a learned outcome holds their objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from analyzer.generator import tools_tagged, value_ends
from analyzer.generator.build import (
    GROUP_NAME,
    Closing,
    Dispatch,
    DispatchOrElse,
    LeadRun,
    LedLoop,
    SpacedLiteral,
)
from analyzer.generator.values import PaddedLiteral, TolerantClosing
from analyzer.parsing.stream import (
    GRAMMAR_CHECKS,
    NO_SHAPES,
    POINTS,
    SHAPE_BUILDERS,
    UNREAD,
    UNSEEN,
)
from analyzer.peg.captures import Capture, LiteralCapture, ToolCapture, UntilCapture
from analyzer.peg.expressions import (
    Choice,
    Commit,
    Eps,
    Expr,
    Optional,
    Repeat,
    Rule,
    Scope,
    Sequence,
)
from analyzer.peg.notes import Noted
from analyzer.peg.scanning import RESCAN_LIMIT, Literal, Space, Token, Until, held_back
from analyzer.peg.state import NEED, MatchState

SPACES = "[ \t\r\n]*"  # as Space reads it: all of it

# How many keys one point learns (a key per argument, fragment and marker beginning, a few
# empty-part patterns each: a few hundred at most); the table starts over when full.
KEYS_KEPT = 512
# How many of the grammar's expressions keep what was built for them (a point's segments
# are built from the same few arguments, leads and closings again and again: a trie of
# marker beginnings costs milliseconds).
BUILT_KEPT = 4096

# How many runs the tree runs from a point before it is no longer read, where none of its
# texts had a decided shape.
GIVE_UP = 32

# How many texts' outcomes a stream keeps (the table starts over when full).
TEXTS_KEPT = 1024

UNDECIDED: Any = False  # a key that always runs the tree


# What a segment's read returns besides where the next segment reads: the text ended in
# this segment, in a decided shape (ENDED), or a text of no decided shape (OTHER).
ENDED, OTHER = -2, -1
WHITESPACE = re.compile(SPACES)


class Shapes:
    """One resume point's shapes of decided text (a chain of segments, each reading its part
    of the text: `ValueSegment`, `LoopSegment`, `ClosingSegment`), and the outcomes learned
    per key."""

    __slots__ = ("segments", "learned", "misses", "decides", "kept")

    def __init__(self, segments: tuple[Any, ...]) -> None:
        self.segments = segments
        self.learned: dict[Any, Any] = {}
        # The (resume point, leaf) pairs a second tree run gave again, the very same objects:
        # a run of another key that gives one of them gives kept objects (it built neither:
        # both were there before it), and is not run twice to tell. By their ids (a leaf
        # need not be hashable), the pair itself as the value (held: ids not reused).
        self.kept: dict[tuple[int, int], tuple[Any, Any]] = {}
        # Runs the tree ran, and whether any shape was learned: a point whose texts never
        # have one (a JSON call's points, with closings only) stops being read.
        self.misses = 0
        self.decides = False

    def run(self, state: MatchState, expr: Expr, text: str, memo: dict[Any, Any],
            base: int, texts: dict[tuple[Any, str], Any]) -> int:
        """Run expr on text as `MatchState.rerun` does, partial, with an empty memo: from a
        learned outcome where text is decided, else the tree (learning from it); the state
        is left as the tree leaves it."""
        met = self.take(state, expr, text, memo, base, texts)
        if type(met) is not list:
            return met  # type: ignore[no-any-return]
        _, events, commits, resume, resume_pos, commit_events, need_end, unsafe_from, leaf, \
            shaky, _, _ = met
        state.text = text
        state.n = len(text)
        state.partial = True
        state.memo = memo
        state.base = base
        state.events = list(events)
        state.commits = commits
        state.resume = resume
        state.resume_pos = resume_pos
        state.commit_events = commit_events
        state.need_end = need_end
        state.unsafe_from = unsafe_from
        state.leaf = leaf
        state.shaky = shaky
        return NEED

    def take(self, state: MatchState, expr: Expr, text: str, memo: dict[Any, Any],
             base: int, texts: dict[tuple[Any, str], Any], found: Any = UNREAD) -> Any:
        """Return the outcome of a run of expr on text where text is decided: the stream's
        kept outcome (a list: the point, events, commits, resume point, where it resumes,
        final events, where the leaf waits, unsafe_from, the leaf, shaky, and the stream's
        answer on the next chunks, UNSEEN until the stream gives it), without filling the
        state (a stream reads the list: `StreamParser._met`). Elsewhere the tree runs on
        the state (learning from it) and its outcome (an int) is returned.

        texts: the stream's decided outcomes by point and text (a stream meets the same few
        texts again and again, `\n</parameter>\n<parameter=`, a name's beginning).
        found: what `decide` gave on this text already (UNREAD: not asked)."""
        met = texts.get((expr, text))
        if met is not None:
            return met
        if found is UNREAD:
            found = self.decide(expr, text, texts)
        if type(found) is list:
            return found
        if found is not None:  # a shape not learned yet: the tree runs, and teaches it
            return self._learn(state, expr, text, memo, base, *found)
        return state.rerun(expr, text, True, memo, base)

    def decide(self, expr: Expr, text: str, texts: dict[tuple[Any, str], Any]) -> Any:
        """Return the kept outcome of a run of expr on text where its shape is learned (a
        list, as `take` gives it, kept in texts); where its shape is not learned yet, what
        learning it needs (the parts' spans, the key, the fixed parts); None where the tree
        runs (no decided shape, or one whose outcome has no places). Reads no state: a
        stream asks it first (`StreamParser._advance`)."""
        n = len(text)
        spans: list[tuple[int, int]] = [(0, n)]
        key: list[Any] = []
        fixed: list[int] = []  # the parts whose texts the key holds
        pos = 0
        for segment in self.segments:
            pos = segment.read(text, pos, n, spans, key, fixed)
            if pos < 0:
                break
        outcome: Any = UNDECIDED
        if pos == ENDED:
            shape = tuple(key)
            outcome = self.learned.get(shape)
            if outcome is None:
                return spans, shape, fixed
        if outcome is UNDECIDED:
            self.misses += 1  # the tree runs
            if self.misses > GIVE_UP and not self.decides:
                POINTS[expr] = NO_SHAPES  # its texts have no decided shape: not read
            return None
        events, commits, resume, resume_at, commit_events, need_at, unsafe_from, leaf, \
            shaky, _ = outcome
        # A list: the stream fills its slot 10 with its answer on the next chunks
        # (StreamParser._steady: the same for the same point and text), UNSEEN until then;
        # the last slot is the learned outcome (where the answer may be kept per key).
        # A loop, not a comprehension: a comprehension's own frame costs more than its one
        # or two events (a run's usual count).
        placed = []
        for role, start, side, off, end, other, end_off, flags, info in events:
            placed.append((role, spans[start][side] + off, spans[end][other] + end_off, flags,
                           info))
        part, side, off = resume_at
        need_part, need_side, need_off = need_at
        met = [expr, placed, commits, resume, spans[part][side] + off, commit_events,
               spans[need_part][need_side] + need_off, unsafe_from, leaf, shaky, UNSEEN,
               outcome]
        if len(texts) >= TEXTS_KEPT:
            texts.clear()
        texts[expr, text] = met
        return met

    def _learn(self, state: MatchState, expr: Expr, text: str, memo: dict[Any, Any],
               base: int, spans: list[tuple[int, int]], key: Any, fixed: list[int]) -> int:
        """Run the tree; keep its outcome under key, as places in the match: a part's start
        or end, or a place inside a part whose text is in the key (a lead, a fragment)."""
        outcome = state.rerun(expr, text, True, memo, base)
        learned = self.learned
        if len(learned) >= KEYS_KEPT:
            learned.clear()
            self.kept.clear()
        learned[key] = UNDECIDED
        if outcome != NEED or memo:
            return outcome
        # Only kept objects: a run that builds its resume point or leaf anew each time (a
        # scan's new state) is not one to give the same objects again.
        ids = (id(state.resume), id(state.leaf))
        pair = self.kept.get(ids)
        if pair is None or pair[0] is not state.resume or pair[1] is not state.leaf:
            again = MatchState("", True, traced=False)
            if (again.rerun(expr, text, True, {}, base) != NEED
                    or again.resume is not state.resume or again.leaf is not state.leaf):
                return outcome
            self.kept[ids] = (state.resume, state.leaf)

        def place(at: int) -> tuple[int, int, int] | None:
            for index, span in enumerate(spans):
                if span[0] == at:
                    return index, 0, 0
                if span[1] == at:
                    return index, 1, 0
            for index in fixed:  # the same places in every text of the key
                start, end = spans[index]
                if start < at < end:
                    return index, 0, at - start
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
        self.decides = True
        # A list: its last slot keeps a stream's answer on the next chunks where every
        # text of the key gets the same (StreamParser._advance), None until then.
        learned[key] = [tuple(events), state.commits, state.resume, resume_at,
                        state.commit_events, need_at, state.unsafe_from, state.leaf,
                        state.shaky, None]
        return outcome


class ValueSegment:
    """A value's text begun at the head of the point (`ValueText` in a capture): it waits
    before a marker's beginning (ENDED), or is closed by its tag and the next segment reads
    on."""

    __slots__ = ("pattern", "tails", "close", "blocks")

    def __init__(self, leaf: value_ends.ValueText, close: str | None,
                 blocks: tuple[tuple[str, str], ...] = ()) -> None:
        lead = lead_class(leaf)
        self.pattern = re.compile(f"((?:[^{lead}]*[^{lead} \t\r\n])?)({SPACES})")
        self.tails = beginnings_of(leaf)
        self.close = close
        # The choice's alternatives before the value, in order, where every one is a block
        # (`_blocks`: its opening literal and the one marker its text runs to). Read only
        # with a closing tag.
        self.blocks = blocks if close is not None else ()

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        found = self.pattern.match(text, pos)
        assert found is not None  # both groups may be empty
        _, value, space = found.regs  # (not two span() calls: a method call each)
        at = space[1]
        if at == pos and self.blocks:  # the value read nothing: a block's opening may lead
            index = block_at(self.blocks, text, pos)
            if index is not None:
                return read_block(self.blocks[index], index, self.close,  # type: ignore[arg-type]
                                  text, pos, n, spans, key, fixed)
        rest = text[at:]
        if rest in self.tails:
            fixed += (len(spans) + 1, len(spans) + 2)
            spans += (value, space, (at, n))
            key += ("value", value[0] == value[1], text[space[0]:at], rest)
            return ENDED
        close = self.close
        if close is not None and text.startswith(close, at):
            end = at + len(close)
            fixed += (len(spans) + 1, len(spans) + 2)
            spans += (value, space, (at, end))
            key += ("closed", value[0] == value[1], text[space[0]:at])
            return end
        return OTHER


def block_at(blocks: tuple[tuple[str, str], ...], text: str, pos: int) -> int | None:
    """Which of a value choice's block alternatives the text at pos takes (its index, in
    the choice's order); None where none is there whole (a text ending inside an opening
    waits on it, as the value's own reading says)."""
    rest = None
    for index, (opening, _) in enumerate(blocks):
        if text.startswith(opening, pos):
            return index
        if rest is None:
            rest = text[pos:]
        if opening.startswith(rest):
            return None
    return None


def read_block(block: tuple[str, str], index: int, close: str, text: str, pos: int, n: int,
               spans: list[tuple[int, int]], key: list[Any], fixed: list[int]) -> int:
    """Read a choice's block alternative (`"<![CDATA[" until("]]>") "]]>"`) from its
    opening: its text to the marker, then the closing tag (the next segment reads on after
    it) or a beginning of it (ENDED); or its text not ended yet, held (ENDED: the tail that
    may begin the marker, which Until holds back, in the key). Whether the block's text
    is empty is in the key."""
    opening, marker = block
    body = pos + len(opening)
    found = text.find(marker, body)
    if found < 0:
        safe = n - held_back(text, body, n, (marker,))
        if safe - body > RESCAN_LIMIT:
            return OTHER  # the tree's Until notes where it scanned to (its memo)
        fixed.append(len(spans) + 2)
        spans += ((pos, body), (body, safe), (safe, n))
        key += ("block open", index, body == safe, text[safe:])
        return ENDED
    end = found + len(marker)
    spans += ((pos, body), (body, found), (found, end))
    key.append(body == found)  # an empty text is captured or not as the run says
    if text.startswith(close, end):
        spans.append((end, end + len(close)))
        key += ("block closed", index)
        return end + len(close)
    rest = text[end:]
    if not close.startswith(rest):
        return OTHER
    fixed.append(len(spans))
    spans.append((end, n))
    key += ("block ended", index, rest)
    return ENDED


class SpaceSegment:
    """Whitespace (Space: all of it, any kind alike); the next segment reads on after it."""

    __slots__ = ()

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        end = WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        spans.append((pos, end))
        key.append(end == pos)
        return end


class SeparatorSegment:
    """A one-character separator that may be left out; the next segment reads on after it
    (at the end of the text it waits: the next segment reads nothing there, its own key)."""

    __slots__ = ("char",)

    def __init__(self, char: str) -> None:
        self.char = char

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        end = pos + 1 if text.startswith(self.char, pos) else pos
        spans.append((pos, end))
        key.append(end != pos)
        return end


class LoopSegment:
    """A call's argument loop: whitespace, then a beginning of an argument's lead, or a
    whole lead and its value begun (ENDED); or a whole argument, closed, and the loop again;
    or no argument, where the text cannot begin one (the next segment reads on from there).
    Unspaced: the loop's first item with its whitespace read (a run held there)."""

    __slots__ = ("dispatch", "branches", "fragments", "opening", "spaced", "leads",
                 "markers", "unnamed", "blocked")

    def __init__(self, dispatch: re.Pattern[str],
                 branches: dict[str, tuple[re.Pattern[str], re.Pattern[str] | None,
                                          frozenset[str]]],
                 fragments: frozenset[str], opening: str, spaced: bool,
                 leads: dict[str, tuple[re.Pattern[str], tuple[str | None, ...]]],
                 markers: dict[str, tuple[re.Pattern[str], frozenset[str]]] | None = None,
                 unnamed: re.Pattern[str] | None = None,
                 blocked: dict[str, tuple[re.Pattern[str], tuple[tuple[str, str], ...], str]]
                 | None = None) -> None:
        # The argument leads' regex (the loop's own dispatch: longest first), and by the
        # lead it finds, the argument's branches: begun (groups 1 whitespace, 2 the lead,
        # 3 the separator, 4 the value's text, 5 its trailing whitespace, 6 a marker's
        # beginning, checked against the third: the texts it may be) and closed (6: its closing
        # tag, matched, not fully).
        self.dispatch = dispatch
        self.branches = branches
        # Every beginning of an argument's lead, and "" (whitespace alone).
        self.fragments = fragments
        # What every argument begins with (the undeclared one too): a text that differs
        # from it before either ends begins no argument.
        self.opening = opening
        self.spaced = spaced
        # By the lead the dispatch finds, where the argument's whole lead goes on past it
        # (`<arg_key>k` then `</arg_key>`, `<arg_value>`): its regex and parts (`lead_parts`).
        self.leads = leads
        # By the lead it finds, an argument whose whole lead is followed by one of several
        # markers (`string="true">`): the lead's regex, and the texts after it that begin a
        # marker (a text that ends there is a fragment, fixed text).
        self.markers = markers or {}
        # Where the loop's other argument is an undeclared one (`<` NAME `>`): its opening
        # then a character no name begins with, where it fails at once (MiniMax-M3's
        # `</invoke>` after the last argument begins with the bare `<`).
        self.unnamed = unnamed
        # By the lead it finds, an argument whose value may be a block (a CDATA section,
        # `_argument_blocks`): its lead's regex, its blocks, its closing tag.
        self.blocked = blocked or {}

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        if pos == n:  # what the loop reads of no text (a third of its reads): an empty fragment
            fixed.append(len(spans) + 1)
            spans += ((n, n), (n, n))
            key += ("fragment", "", True)
            return ENDED
        spaced = self.spaced
        while True:
            start = WHITESPACE.match(text, pos).end() if spaced else pos  # type: ignore[union-attr]
            lead = self.dispatch.match(text, start)
            if lead is not None:
                branch = self.branches.get(lead.group())
                if branch is not None:
                    # The groups read from the match's regs, not by a method call each
                    found = branch[0].fullmatch(text, pos)
                    regs = None if found is None else found.regs
                    begun = regs is not None
                    if begun:
                        tail = text[regs[6][0]:regs[6][1]]  # type: ignore[index]
                        if tail not in branch[2]:
                            regs = None  # it ends in no beginning of the value's markers
                            begun = False
                    if regs is None and branch[1] is not None:
                        found = branch[1].match(text, pos)
                        if found is not None:
                            regs = found.regs
                            tail = text[regs[6][0]:regs[6][1]]
                    if regs is None and self.blocked:
                        at = self._block(text, pos, n, lead.group(), spans, key, fixed)
                        if at is not None:
                            if at < 0:
                                return at
                            pos, spaced = at, True
                            continue
                    if regs is not None:
                        size = len(spans) - 1  # regs[group] is spans[size + group]
                        fixed += (size + 2, size + 5, size + 6)
                        spans += regs[1:]
                        (lead_at, lead_end), (space_at, space_end) = regs[2], regs[5]
                        end = regs[0][1]
                        key += ("argument" if end == n else "closed", text[lead_at:lead_end],
                                start == pos, regs[3][0] == regs[3][1],
                                regs[4][0] == regs[4][1], text[space_at:space_end], tail)
                        if end == n and begun:
                            return ENDED
                        pos, spaced = end, True
                        continue
            rest = text[start:]
            if rest in self.fragments or (lead is not None and self.markers and
                                          self._marker_begun(text, start, lead.group())):
                fixed.append(len(spans) + 1)
                spans += ((pos, start), (start, n))
                key += ("fragment", rest, start == pos)
                return ENDED
            # Past the dispatch's lead, the text may end inside the rest of an argument's
            # the branches read (where its regex finds that whole, a branch did not read on).
            whole = self.leads.get(lead.group()) if lead is not None and branch is not None \
                else None
            if whole is not None and whole[0].match(text, start) is None:
                spans.append((pos, start))
                key += ("lead begun", lead.group(), start == pos)  # type: ignore[union-attr]
                return lead_begun(whole[1], text, start, n, spans, key, fixed)
            size = min(len(rest), len(self.opening))
            if not size or rest[:size] == self.opening[:size] and (
                    lead is not None or self.unnamed is None or not self.unnamed.match(rest)):
                return OTHER
            key.append("none")
            return pos

    def _block(self, text: str, pos: int, n: int, lead: str, spans: list[tuple[int, int]],
               key: list[Any], fixed: list[int]) -> int | None:
        """Read an argument whose value is a block (`read_block`) from pos: where the read
        ends (ENDED, OTHER, or the closing tag's end: the loop reads on); None where its
        value is no block (the reads after it say)."""
        blocked = self.blocked.get(lead)
        if blocked is None:
            return None
        head, blocks, close = blocked
        found = head.match(text, pos)
        if found is None:
            return None
        regs = found.regs
        index = block_at(blocks, text, regs[0][1])
        if index is None:
            return None
        size = len(spans) - 1  # regs[group] is spans[size + group]
        fixed.append(size + 2)
        spans += regs[1:]
        (lead_at, lead_end), (space_at, space_end) = regs[2], regs[1]
        key += ("block argument", text[lead_at:lead_end], text[space_at:space_end],
                regs[3][0] == regs[3][1])
        return read_block(blocks[index], index, close, text, regs[0][1], n, spans, key, fixed)

    def _marker_begun(self, text: str, start: int, lead: str) -> bool:
        """Whether text from start is an argument's whole lead, then a beginning of one of
        the markers after it."""
        marked = self.markers.get(lead)
        if marked is None:
            return False
        whole = marked[0].match(text, start)
        return whole is not None and text[whole.end():] in marked[1]


def lead_begun(parts: tuple[str | None, ...], text: str, at: int, n: int,
               spans: list[tuple[int, int]], key: list[Any], fixed: list[int]) -> int:
    """Read a lead's parts (`lead_parts`: literals, None for whitespace) from at, where the
    text ends inside one (ENDED: a literal begun, its beginning in the key, or whitespace
    with nothing after it); a text that reads the whole lead, or differs from it, is OTHER
    (the argument's own regexes read a whole lead)."""
    for part in parts:
        if part is None:
            end = WHITESPACE.match(text, at).end()  # type: ignore[union-attr]
            spans.append((at, end))
            key.append(end == at)
            at = end
        elif text.startswith(part, at):
            fixed.append(len(spans))
            spans.append((at, at + len(part)))
            at += len(part)
        else:
            rest = text[at:]
            if not part.startswith(rest):
                return OTHER
            fixed.append(len(spans))
            spans.append((at, n))
            key.append(rest)
            return ENDED
    return OTHER


class ClosingSegment:
    """A marker after optional whitespace (a closing `space MARKER | noted(missing)`, or a
    `SpacedLiteral`: an argument's `<arg_value>` after its key): whole (the next segment
    reads on after it), or begun (ENDED)."""

    __slots__ = ("marker", "beginnings")

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.beginnings = frozenset(marker[:size] for size in range(len(marker)))

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        start = WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(self.marker, start):
            end = start + len(self.marker)
            fixed.append(len(spans) + 1)
            spans += ((pos, start), (start, end))
            key += ("closing", start == pos)
            return end
        rest = text[start:]
        if rest in self.beginnings:
            fixed.append(len(spans) + 1)
            spans += ((pos, start), (start, n))
            key += ("begun", rest, start == pos)
            return ENDED
        return OTHER


class MarkersSegment:
    """One of several markers after optional whitespace, each then a value of one form
    (`_markers`: DeepSeek's `string="true">` or `"false">`): a marker whole (the value's
    segment reads on after it), or begun (ENDED)."""

    __slots__ = ("pattern", "beginnings")

    def __init__(self, markers: tuple[str, ...], beginnings: frozenset[str]) -> None:
        self.pattern = re.compile("|".join(map(re.escape, markers)))
        self.beginnings = beginnings

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        start = WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        found = self.pattern.match(text, start)
        if found is not None:
            end = found.end()
            fixed.append(len(spans) + 1)
            spans += ((pos, start), (start, end))
            key += ("marker", found.group(), start == pos)
            return end
        rest = text[start:]
        if rest in self.beginnings:
            fixed.append(len(spans) + 1)
            spans += ((pos, start), (start, n))
            key += ("marker begun", rest, start == pos)
            return ENDED
        return OTHER


class CallsSegment:
    """The loop of calls: whitespace, the calls' wrapper token (optional), then a beginning
    of a call's head (ENDED), or a whole head and what its own segments read of the call
    (its argument loop, its closing...), as far as they end the text."""

    __slots__ = ("token", "token_beginnings", "dispatch", "calls", "fragments", "after",
                 "required")

    def __init__(self, token: str, after: bool, dispatch: re.Pattern[str],
                 calls: dict[str, tuple[re.Pattern[str], tuple[Any, ...], bool]],
                 fragments: frozenset[str], required: bool = False) -> None:
        self.token = token
        self.token_beginnings = frozenset(token[:size] for size in range(len(token)))
        self.after = after  # the token reads the whitespace after it
        self.dispatch = dispatch
        # By a call head's literal (the dispatch's lead): the head's regex, the segments of
        # the call's items after it, and whether the regex holds a lookahead (it may read the
        # character after its match: the key holds that character).
        self.calls = calls
        self.fragments = fragments  # every beginning of a call head's literal, and ""
        # Whether every call begins with the token (a text without it ends the loop: the
        # tree reads that)
        self.required = required

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        start = WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        token = self.token
        if text.startswith(token, start):
            end = start + len(token)
            after = WHITESPACE.match(text, end).end() if self.after else end  # type: ignore[union-attr]
            fixed.append(len(spans) + 2)
            spans += ((pos, start), (start, end), (end, after))
            key += ("token", start == pos, text[end:after])
        else:
            rest = text[start:]
            if rest in self.token_beginnings:
                fixed.append(len(spans) + 1)
                spans += ((pos, start), (start, n))
                key += ("token begun", rest, start == pos)
                return ENDED
            if rest[:len(token)] == token[:len(rest)] or self.required:
                return OTHER
            after = start
            spans.append((pos, start))
            key += ("no token", start == pos)
        return self.read_call(text, after, n, spans, key, fixed)

    def read_call(self, text: str, after: int, n: int, spans: list[tuple[int, int]],
                  key: list[Any], fixed: list[int]) -> int:
        """Read a beginning of a call's head (ENDED), or a whole head and the call's own
        segments, from after."""
        lead = self.dispatch.match(text, after)
        if lead is not None:
            call = self.calls.get(lead.group())
            found = None if call is None else call[0].match(text, after)
            if found is not None and call is not None:
                head = found.span()
                fixed.append(len(spans))
                spans.append(head)
                key += ("head", found.group())
                if call[2]:
                    key.append(text[head[1]:head[1] + 1])
                at: int = head[1]
                for segment in call[1]:
                    at = segment.read(text, at, n, spans, key, fixed)
                    if at < 0:
                        return at
                return OTHER
        return self.head_begun(text, after, n, spans, key, fixed)

    def head_begun(self, text: str, after: int, n: int, spans: list[tuple[int, int]],
                   key: list[Any], fixed: list[int]) -> int:
        """Read what is left after the token when no whole head is there: a beginning of a
        call's head (ENDED), or OTHER."""
        rest = text[after:]
        if rest in self.fragments:
            fixed.append(len(spans))
            spans.append((after, n))
            key += ("head begun", rest)
            return ENDED
        return OTHER


class BareCallsSegment(CallsSegment):
    """The loop of calls without a wrapper token: whitespace, then what CallsSegment reads
    after its token."""

    __slots__ = ()

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        start = WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        spans.append((pos, start))
        key += ("bare", start == pos)
        return self.read_call(text, start, n, spans, key, fixed)


def flat_items(expr: Expr) -> list[Expr]:
    """The items a resume point runs in order (its sequences and scopes opened)."""
    if type(expr) is Sequence:
        return [item for inner in expr.items for item in flat_items(inner)]
    if type(expr) is Scope:
        return flat_items(expr.body)
    return [expr]


def first_item(point: Any) -> Any:
    """The item a point runs first (its sequences and scopes opened)."""
    while True:
        kind = type(point)
        if kind is Sequence:
            point = point.items[0]
        elif kind is Scope:
            point = point.body
        else:
            return point


def _begins(point: Any) -> bool:
    """Whether a segment reads point's first item (as _segments would, from what is kept
    per grammar expression: a point that holds a JSON scan's new state is a new object at
    every run, and asks once per run)."""
    head = point
    while True:
        kind = type(head)
        if kind is Sequence:
            head = head.items[0]
        elif kind is Scope:
            head = head.body
        elif kind is ToolCapture and head.opened and type(head.item) is not Closing:
            head = head.item
        else:
            break
    return _head_begins(head)


def _head_begins(head: Any) -> bool:
    """Whether a segment reads this first item (_begins); the kept answers only asked for
    kinds the grammar keeps (a JSON scan's new state would fill them)."""
    kind = type(head)
    if kind is Space or _separator(head) is not None:
        return True
    if kind is Capture or kind is Choice:
        return _value_capture(head) is not None or _marker_choice(head) is not None
    if kind is Repeat:
        return (_loop(head) or _calls(head)) is not None
    if kind is Optional:
        return _loop(head) is not None
    if kind is Closing or kind is ToolCapture:
        return _closing(head) is not None
    if kind is SpacedLiteral:
        return _marker(head) is not None
    if kind is LedLoop:
        return _calls(head) is not None
    return False


def _build(point: Expr) -> Shapes | None:
    """The shapes of point: as far as its items are of the kinds segments read, from its
    head (None: none that may end a text)."""
    if not _begins(point):
        return None  # at once: a JSON scan's point is a new object at every run
    segments = _segments(flat_items(point))
    if not any(type(segment) not in (SpaceSegment, SeparatorSegment) for segment in segments):
        return None
    return Shapes(tuple(segments))


def _segments(items: list[Expr]) -> list[Any]:
    """The segments of items in a row, as far as they are of the kinds read: whitespace, a
    one-character separator, a value begun (then its closing tag), a call's argument loop,
    closing markers, the loop of calls; a call's body, its opening recorded, read as its
    items."""
    segments: list[Any] = []
    items = _opened(items)
    at = 0
    while at < len(items):
        item: Any = items[at]
        if type(item) is Space:
            segments.append(SpaceSegment())
        elif (one := _separator(item)) is not None:
            segments.append(SeparatorSegment(one))
        elif (valued := _value_capture(item)) is not None:
            after: Any = items[at + 1] if at + 1 < len(items) else None
            value = _value_segment(item, valued, after)
            if value is None:
                break
            segments.append(value)
            if value.close is None:
                break
            at += 1
        elif (marked := _marker_choice(item)) is not None:
            # the markers, then the value and its closing tag every alternative spells alike
            markers, (value_item, closing) = marked
            value = _value_segment(value_item, _value_capture(value_item), closing)
            if value is None or value.close is None:
                break
            segments += (markers, value)
        else:
            segment = _loop(item) or _closing(item) or _calls(item) or _marker(item)
            if segment is None:
                break
            segments.append(segment)
        at += 1
    return segments


def _value_segment(item: Any, valued: Any, after: Any) -> ValueSegment | None:
    """The segment of a value item (`_value_capture` gave valued) and the item after it
    (its closing tag, read with it where the value ends at it); None: not read."""
    leaf, others = valued
    if not _value_form(leaf):
        return None
    close = after.end if type(after) is TolerantClosing and after.end == leaf.end \
        and all(_apart(other, after.end) for other in others) else None
    return ValueSegment(leaf, close, _blocks(item))


@lru_cache(maxsize=BUILT_KEPT)
def _marker_choice(item: Any) -> tuple[MarkersSegment, tuple[Expr, Expr]] | None:
    """A choice of markers each then a value of one form (`_markers`): its segment, and the
    value and closing items (the first alternative's); None: not such a choice."""
    if type(item) is not Choice:
        return None
    marked = _markers((item,))
    if marked is None:
        return None
    _, after, beginnings = marked
    value_item, closing = (each for each in after if type(each) is not Eps)
    markers = tuple(flat_items(alternative)[0].text  # type: ignore[attr-defined]
                    for alternative in item.alternatives)
    return MarkersSegment(markers, beginnings), (value_item, closing)


def _opened(items: list[Expr]) -> list[Expr]:
    """items, a call's body whose opening is recorded read as its items."""
    flat: list[Expr] = []
    for item in items:
        if type(item) is ToolCapture and item.opened and type(item.item) is not Closing:
            flat += _opened(flat_items(item.item))
        else:
            flat.append(item)
    return flat


def _separator(item: Any) -> str | None:
    """A one-character separator that may be left out (`'\\n'?`), or None."""
    kind = type(item)
    one = (item.item.text if kind is Optional and type(item.item) is Literal
           else item.pad if kind is PaddedLiteral and not item.text else None)
    return one if one is not None and len(one) == 1 else None


def loop_items(head: Any) -> tuple[Expr, ...] | None:
    """The items of a loop of calls (`(space ...)*`, or with a required token, `LedLoop`),
    at least three, whitespace first; None: a loop spelled otherwise."""
    if type(head) is LedLoop:
        head = head.repeat
    if type(head) is not Repeat or type(head.item) is not Sequence:
        return None
    items = head.item.items
    if len(items) < 3 or type(items[0]) is not Space:
        return None
    return items


@lru_cache(maxsize=BUILT_KEPT)
def _calls(head: Any) -> CallsSegment | None:
    """The loop of calls: `(space TOKEN? (CALL_1 | ... | otherwise) ...)*`, each call
    `ToolCapture(LeadRun(HEAD rest...))` in a rule; or with the token required (`LedLoop`:
    the token before every call, as `<tool_call>`)."""
    items = loop_items(head)
    if items is None:
        return None
    # Where the calls have no wrapper token, the grammar's whitespace around it is two
    # spaces in a row (the first reads all of it).
    bare = type(items[1]) is Space
    required = not bare and type(items[1]) is not Optional
    token: Any = None if bare else items[1] if required else items[1].item  # type: ignore[attr-defined]
    if not bare and (type(token) is not Token or token.before):
        return None
    choice = items[2]
    if type(choice) is not DispatchOrElse or type(choice.dispatch) is not Dispatch:
        return None
    calls = {}
    for lead, alternative in choice.dispatch.table.items():
        inner: Any = alternative.body if type(alternative) is Rule else alternative
        inner = inner.item if type(inner) is ToolCapture and not inner.opened else None
        if type(inner) is not LeadRun or inner.tool or not lead:
            continue
        pattern = inner.pattern
        if pattern.groups != len(pattern.groupindex) or "(?=" in pattern.pattern or (
                "(?!" in pattern.pattern and (inner.margin is None or inner.margin > 1)):
            continue  # a lookahead may read past the character after the head (the key's)
        segments = tuple(_segments([flat for item in inner.rest for flat in flat_items(item)]))
        if segments:
            calls[lead] = (pattern, segments, "(?!" in pattern.pattern)
    if not calls:
        # No call's body is read on: the loop would decide only texts that end before a
        # body begins, too few to pay for reading every text of its point (Gemma 4's
        # `<|tool_call>call:name{`: its stream never stopped asking, 16-byte instructions
        # 59.41M on main, 60.85M with such a segment, 59.34M without).
        return None
    fragments = frozenset({"", *(lead[:size] for lead in choice.dispatch.table
                                 for size in range(1, len(lead) + 1))})
    if bare:
        return BareCallsSegment("", False, choice.dispatch.pattern, calls, fragments)
    return CallsSegment(token.text, token.after is not None, choice.dispatch.pattern, calls,
                        fragments, required)


@lru_cache(maxsize=BUILT_KEPT)
def _closing(item: Any) -> ClosingSegment | None:
    if type(item) is ToolCapture and item.opened:
        item = item.item
    if type(item) is Closing and item.waiting is not None:
        return ClosingSegment(item.text)
    return None


@lru_cache(maxsize=BUILT_KEPT)
def _marker(item: Any) -> ClosingSegment | None:
    """A marker after optional whitespace (`SpacedLiteral`), read as a closing marker is:
    whole, or begun where the run waits on it."""
    if type(item) is SpacedLiteral and item.text:
        return ClosingSegment(item.text)
    return None


@lru_cache(maxsize=BUILT_KEPT)
def _loop(head: Any) -> LoopSegment | None:
    """A call's argument loop: `(space (ARG_1 | ... | undeclared))*`, or held at its first
    item after the whitespace: `((ARG_1 | ... | undeclared) LOOP)?`."""
    spaced = True
    if type(head) is Optional and type(head.item) is Sequence and len(head.item.items) == 2:
        first, head = head.item.items
        spaced = False
        if type(head) is not Repeat or type(head.item) is not Sequence or (
                head.item.items[1:] != (first,)):
            return None
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
    markers = {}
    blocked = {}
    for lead, alternative in table.items():
        branch = _argument(alternative)
        if branch is not None:
            branches[lead] = branch
            with_blocks = _argument_blocks(alternative)
            if with_blocks is not None:
                blocked[lead] = with_blocks
            marked = _markers(alternative.rest)  # type: ignore[attr-defined]
            if marked is not None:
                markers[lead] = (alternative.pattern, marked[2])  # type: ignore[attr-defined]
    fragments = frozenset({"", *(lead[:size] for lead in table
                                 for size in range(1, len(lead) + 1))})
    opening = getattr(choice.otherwise.children()[0] if choice.otherwise.children()
                      else choice.otherwise, "opening", None)
    if not isinstance(opening, str) or not opening:
        return None
    leads = [*table, opening]
    common = leads[0]
    for lead in leads:
        while not lead.startswith(common):
            common = common[:-1]
    if not common:
        return None
    whole_leads = {}
    for lead, alternative in table.items():
        parts = lead_parts(alternative)
        if parts is not None and "".join(part or "" for part in parts) != lead:
            whole_leads[lead] = (alternative.pattern, parts)  # type: ignore[attr-defined]
    return LoopSegment(choice.dispatch.pattern, branches, fragments, common, spaced,
                       whole_leads, markers, _unnamed(choice.otherwise), blocked)


def _unnamed(otherwise: Expr) -> re.Pattern[str] | None:
    """A text the loop's undeclared argument fails at without reading (its opening, then a
    character no argument name begins with; `UndeclaredArgument.match`), where the loop's
    other argument is that (noted or not); None: another."""
    other = otherwise.children()[0] if type(otherwise) is Noted else otherwise
    if type(other) is not tools_tagged.UndeclaredArgument or not other.opening:
        return None
    name = tools_tagged.ARGUMENT_NAME.pattern
    return re.compile(f"{re.escape(other.opening)}(?!{name}).", re.DOTALL)


@lru_cache(maxsize=BUILT_KEPT)
def lead_parts(alternative: Expr) -> tuple[str | None, ...] | None:
    """An argument's lead (the items its LeadRun's regex reads) as literals and whitespace
    (None), where each item is one of those: literals, a captured name, a marker after
    whitespace, a commit (None: another item)."""
    if type(alternative) is not LeadRun or alternative.tool or alternative.margin != 0:
        return None
    items = alternative.whole.items  # type: ignore[attr-defined]
    parts: list[str | None] = []
    for item in items[:len(items) - len(alternative.rest)]:
        kind = type(item)
        if kind is Literal or kind is SpacedLiteral:
            parts += ([None] if kind is SpacedLiteral else []) + [item.text]
        elif kind is LiteralCapture:
            parts.append(item.literal)
        elif kind is Space:
            parts.append(None)
        elif kind is not Commit and kind is not Eps:
            return None
    return tuple(parts)


@lru_cache(maxsize=BUILT_KEPT)
def _argument(alternative: Expr) -> tuple[re.Pattern[str], re.Pattern[str] | None,
                                          frozenset[str]] | None:
    """The branches of one argument: whitespace, its whole lead, then its value begun; and
    the same with the value closed by its tag (None: an argument the grammar spells
    otherwise); and the texts the begun value may end in (its group 6 is one of them)."""
    if type(alternative) is not LeadRun or alternative.tool or alternative.margin != 0:
        return None
    lead = alternative.pattern.pattern
    if "(?=" in lead or "(?!" in lead:
        return None
    rest = alternative.rest
    marked = _markers(rest)
    if marked is not None:  # the marker read as the lead's end (the key holds its text)
        lead += marked[0]
        rest = marked[1]
    body = f"({SPACES})(" + GROUP_NAME.sub("(?:", lead) + ")"
    separator = False
    for at, item in enumerate(rest):
        kind = type(item)
        if kind is Eps:
            continue
        # A one-character separator that may be left out (`'\\n'?`): it waits only at the
        # end of the text, where the value's groups are empty too.
        one = _separator(item)
        if one is not None and not separator:
            body += "(" + re.escape(one) + "?)"
            separator = True
            continue
        until = _until_forms(item, rest[at + 1:])
        if until is not None:  # a value up to its marker, then the marker
            body += "" if separator else "()"
            return re.compile(body + until[0]), re.compile(body + until[1]), until[2]
        valued = _value_capture(item)
        if valued is not None:
            leaf, others = valued
            value = _value(leaf)
            if value is None:
                return None
            body += "" if separator else "()"
            begun = re.compile(body + value)
            if begun.groups != 6:
                return None
            after = rest[at + 1:]
            closing = after[0] if len(after) == 1 else None
            tails = beginnings_of(leaf)
            if type(closing) is not TolerantClosing or closing.end != leaf.end or not all(
                    _apart(other, closing.end) for other in others):
                return begun, None, tails
            lead_char = lead_class(leaf)
            closed = re.compile(f"{body}((?:[^{lead_char}]*[^{lead_char} \\t\\r\\n])?)"
                                f"({SPACES})({re.escape(closing.end)})")
            return begun, closed, tails
        return None
    return None


def _until_forms(item: Any, after: tuple[Expr, ...]
                 ) -> tuple[str, str, frozenset[str]] | None:
    """An argument's value read up to its marker, then the marker (MiniMax-M3's nested tag
    values: `until(MARKER) MARKER`): the value begun as `Until` waits on it (no whole marker,
    then the longest tail that begins it, group 6; not longer than `RESCAN_LIMIT`, where the
    tree keeps a rescan place in the memo), the value closed by the marker, and the tails
    (None: another item)."""
    after = tuple(other for other in after if type(other) is not Eps)
    if type(item) is not Capture and type(item) is not UntilCapture or (
            type(item.item) is not Until or len(item.item.markers) != 1):
        return None
    marker = item.item.markers[0]
    if len(after) != 1 or type(after[0]) is not Literal or after[0].text != marker:
        return None
    escaped = re.escape(marker)
    tails = [re.escape(marker[:size]) for size in range(len(marker) - 1, 0, -1)]
    begun = (f"((?:(?!{escaped})[\\s\\S]){{0,{RESCAN_LIMIT}}}?)()((?:{'|'.join(tails)})?)")
    closed = f"((?:(?!{escaped})[\\s\\S])*)()({escaped})"
    return begun, closed, frozenset(marker[:size] for size in range(len(marker)))


@lru_cache(maxsize=BUILT_KEPT)
def _argument_blocks(alternative: Expr) -> tuple[re.Pattern[str], tuple[tuple[str, str], ...],
                                                 str] | None:
    """An argument whose value is a choice with block alternatives (`_blocks`) then its
    closing tag: the regex of its whitespace, whole lead and separator (groups 1-3, as
    `_argument`'s), the blocks, the closing tag; None: not such an argument."""
    branch = _argument(alternative)
    if branch is None or branch[1] is None or _markers(alternative.rest) is not None:  # type: ignore[attr-defined]
        return None
    rest = [item for item in alternative.rest if type(item) is not Eps]  # type: ignore[attr-defined]
    one = _separator(rest[0])
    blocks = _blocks(rest[0] if one is None else rest[1])
    if not blocks:
        return None
    close = rest[-1].end
    if not all(_apart(opening, close) for opening, _ in blocks):
        return None
    lead = GROUP_NAME.sub("(?:", alternative.pattern.pattern)  # type: ignore[attr-defined]
    head = re.compile(f"({SPACES})({lead})" + ("()" if one is None else
                                                f"({re.escape(one)}?)"))
    return head, blocks, close


@lru_cache(maxsize=BUILT_KEPT)
def _markers(rest: tuple[Expr, ...]) -> tuple[str, tuple[Expr, ...], frozenset[str]] | None:
    """An argument's value led by one of several markers after its lead (DeepSeek's
    `string="true">` or `"false">`): `space MARKER_1 VALUE CLOSE | space MARKER_2 ...`,
    each a value of the same form. Return the markers' regex (whitespace, one of them), the
    items after a marker (the first alternative's), and every proper beginning of a marker
    (a text ending there waits in the choice); None: not such a choice.

    The markers are no beginnings of one another: the one the regex finds is the one the
    choice takes, after failing the ones before it at their own text."""
    items = [item for item in rest if type(item) is not Eps]
    if len(items) != 1 or type(items[0]) is not Choice:
        return None
    markers: list[str] = []
    forms = set()
    for alternative in items[0].alternatives:
        flat = flat_items(alternative)
        if not flat or type(flat[0]) is not SpacedLiteral:
            return None
        form = _value_form_of(tuple(flat[1:]))
        if form is None:
            return None
        forms.add(form)
        markers.append(flat[0].text)
    if len(forms) != 1 or any(marker[:1] in value_ends.SPACE or any(
            other != marker and other.startswith(marker) for other in markers)
            for marker in markers):
        return None
    regex = SPACES + "(?:" + "|".join(map(re.escape, markers)) + ")"
    beginnings = frozenset(marker[:size] for marker in markers for size in range(len(marker)))
    return regex, tuple(flat_items(items[0].alternatives[0])[1:]), beginnings


def _value_form_of(items: tuple[Expr, ...]) -> tuple[Any, ...] | None:
    """What decides a value and its closing tag the same way (`_markers`' alternatives must
    agree on it): a value read as text, then its closing; None: other items."""
    items = tuple(item for item in items if type(item) is not Eps)
    if len(items) != 2 or type(items[1]) is not TolerantClosing:
        return None
    valued = _value_capture(items[0])
    if valued is None:
        return None
    leaf, others = valued
    return leaf.leads, leaf.end, beginnings_of(leaf), others, items[1].end


@lru_cache(maxsize=BUILT_KEPT)
def _value_capture(item: Any) -> tuple[value_ends.ValueText, tuple[str, ...]] | None:
    """The value item reads as text (`ValueText` in a capture), and the literal prefixes
    of the alternatives a choice tries before it; None: a value spelled otherwise.

    A choice's other alternatives (a CDATA block, `"<![CDATA[" ... | value-text`) must each
    begin with a literal that begins with the value's lead character: a value's regex reads
    no lead character, so where the value or its whitespace is not empty the choice skips
    them (`Choice.by_char`) at its first character; where both are empty, what the choice
    meets is a text the key holds (a marker's beginning at the end, or the closing tag:
    `_apart`)."""
    if type(item) is Capture:
        leaf = item.item
        return (leaf, ()) if type(leaf) is value_ends.ValueText else None
    if type(item) is not Choice or not item.alternatives:
        return None
    *others, last = item.alternatives
    if type(last) is not Capture or type(last.item) is not value_ends.ValueText:
        return None
    leaf = last.item
    prefixes = tuple(other.prefix()[0] for other in others)
    if not _value_form(leaf) or not all(prefix[:1] and prefix[0] in leaf.leads
                                        for prefix in prefixes):
        return None
    return leaf, prefixes


@lru_cache(maxsize=BUILT_KEPT)
def _blocks(item: Any) -> tuple[tuple[str, str], ...]:
    """A value choice's alternatives before its value, each as `_block` gives it; () where
    any is spelled otherwise (the tree reads those texts)."""
    if type(item) is not Choice:
        return ()
    blocks = tuple(_block(other) for other in item.alternatives[:-1])
    return () if None in blocks else blocks  # type: ignore[return-value]


def _block(alternative: Expr) -> tuple[str, str] | None:
    """An alternative that is a block: an opening literal, a capture of the text up to one
    marker (`Until`), that marker (`"<![CDATA[" until("]]>") "]]>"`); its opening and
    marker (None: spelled otherwise)."""
    items = [item for item in flat_items(alternative) if type(item) is not Eps]
    if len(items) != 3:
        return None
    opening, body, end = items
    if type(opening) is not Literal or type(end) is not Literal or not isinstance(
            body, Capture) or type(body.item) is not Until:
        return None
    markers = body.item.markers
    if markers != (end.text,) or not opening.text:
        return None
    return opening.text, end.text


def _apart(prefix: str, close: str) -> bool:
    """Whether a choice's alternative led by prefix is skipped at a closing tag whatever
    follows it: the two differ before either ends."""
    size = min(len(prefix), len(close))
    return prefix[:size] != close[:size]


def _value_form(leaf: value_ends.ValueText) -> bool:
    """Whether ValueText reads this value as _value's regex says: lead characters (usually
    one, `<`; MiniMax-M3's markers begin with `]` or `<`), none of them whitespace, one of
    which every marker begins with (after whitespace). ValueText reads a text without any
    of them as its value whichever they are (`_has_lead`): only where the first one is met
    does its reading depend on the text, and from there the key holds the text."""
    leads = leaf.leads
    return (bool(leads) and not any(lead in value_ends.SPACE for lead in leads)
            and all(marker.lstrip(value_ends.SPACE)[:1] in leads
                    and marker.strip(value_ends.SPACE) for marker in leaf.markers))


def lead_class(leaf: value_ends.ValueText) -> str:
    """The value's lead characters as the inside of a regex character class."""
    return "".join(re.escape(lead) for lead in leaf.leads)


@lru_cache(maxsize=BUILT_KEPT)
def beginnings_of(leaf: value_ends.ValueText) -> frozenset[str]:
    """The texts a value may end in while it waits: "", or a proper beginning of one of
    its markers (from the lead character on)."""
    return frozenset({"", *(marker[:size] for marker in leaf.markers
                            for size in range(1, len(marker))
                            if marker[0] in leaf.leads)})


@lru_cache(maxsize=BUILT_KEPT)
def _value(leaf: value_ends.ValueText) -> str | None:
    """A value's text begun and not ended, as ValueText waits on it: no character that may
    begin a marker; trailing whitespace (left for the closing); then what follows from the
    first lead character on, which the reader checks is a beginning of a marker
    (`beginnings_of`: a stream's chunk ends in `\\n</para`). A set lookup, not a regex of
    every beginning: that alternation made each argument's regex ~940 characters, 1.5-2.3 ms
    to compile, most of a grammar's first stream."""
    if not _value_form(leaf):
        return None
    body = lead_class(leaf)
    return f"((?:[^{body}]*[^{body} \\t\\r\\n])?)({SPACES})((?:[{body}][\\s\\S]*)?)"


def _has_values(start: Any) -> bool:
    """Whether the grammar holds a value read as text (`ValueText` in a capture): only the
    points of such grammars have segments that decide (a JSON value has none)."""
    return grammar_holds(start, lambda expr: type(expr) is Capture
                         and type(expr.item) is value_ends.ValueText)


def grammar_holds(start: Any, wanted: Callable[[Any], bool]) -> bool:
    """Whether any expression of the grammar (each visited once) is wanted."""
    seen: set[int] = set()
    todo = [start]
    while todo:
        expr = todo.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        if wanted(expr):
            return True
        todo.extend(expr.children())
    return False


SHAPE_BUILDERS.append(_build)
GRAMMAR_CHECKS.append(_has_values)
