"""Leaf expressions that scan text: literal, until(markers), rest, whitespace, regex, end.

They scan with str.startswith / str.find / compiled regexes, never char by char in Python.
In partial mode a leaf that reaches the end of the input returns NEED, never a success that
more input could change, so every success and every failure is final.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from analyzer.peg.expressions import SEQUENCE_LEVEL, Expr
from analyzer.peg.state import FAIL, MatchState

SPACE = re.compile(r"[ \t\r\n]*")
SPACE_CHARS = " \t\r\n"
SKIPPED_SPACE = frozenset(SPACE_CHARS)
# A stream that re-matches an Until from the same start (a choice not yet decided) skips the
# text it already searched once that exceeds this many characters.
RESCAN_LIMIT = 256


def quote(text: str) -> str:
    """Show text as a quoted literal in dumps (single quotes when that avoids escapes)."""
    shown = json.dumps(text, ensure_ascii=False)
    if '\\"' in shown and "'" not in text and shown.count("\\") == shown.count('\\"'):
        return "'" + text + "'"
    return shown


class Literal(Expr):
    """Match an exact string."""

    __slots__ = ("text", "size", "expected")
    plain = True

    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)
        self.expected = f"`{text}`"  # built once: literals fail in every choice they lose

    def match(self, st: MatchState, pos: int) -> int:
        if st.text.startswith(self.text, pos):
            return pos + self.size
        if st.partial and st.n - pos < self.size and self.text.startswith(st.text[pos:]):
            return st.need(self, pos, pos)
        if pos < st.fail_pos:
            return FAIL  # a farther failure is already the one a trace shows
        return st.fail(pos, self.expected)

    def with_space(self, before: bool, after: bool) -> Expr | None:
        # Not for a subclass: the token would drop what it matches differently.
        return Token(self.text, before, after) if type(self) is Literal else None

    def waiting_end(self, text: str, at: int) -> int:
        # More of the literal, not all of it: it waits where it did.
        rest = len(text) - at
        return at if rest < self.size and self.text.startswith(text[at:]) else -1

    def describe(self) -> str:
        return quote(self.text)

    def prefix(self) -> tuple[str, bool]:
        return self.text, True

    def opening_chars(self) -> frozenset[str] | None:
        return frozenset(self.text[0]) if self.text else None

    def matches_at_end(self) -> bool:
        return not self.text

    def never_commits(self) -> bool:
        return True


class Token(Literal):
    """`space literal`, `literal space` or `space literal space` in one step.

    `sequence()` fuses them (JSON's `space ":" space`, in every member of every call): one
    call instead of three, and a resume point that stays the sequence's own. Input that ends
    in the leading whitespace or inside the literal resumes from the token; input that ends in
    the trailing whitespace resumes from that whitespace alone, as the three items would."""

    __slots__ = ("before", "after")
    level = SEQUENCE_LEVEL
    plain = False  # it reads whitespace too

    def __init__(self, text: str, before: bool, after: bool) -> None:
        super().__init__(text)
        self.before = before
        self.after: Space | None = Space() if after else None

    def match(self, st: MatchState, pos: int) -> int:
        text, n = st.text, st.n
        if self.before and (pos == n or text[pos] in SPACE_CHARS):
            pos = SPACE.match(text, pos).end()  # type: ignore[union-attr]  # * always matches
            if pos == n and st.partial:
                return st.need(self, pos, pos)
        if text.startswith(self.text, pos):
            pos += self.size
        elif st.partial and n - pos < self.size and self.text.startswith(text[pos:]):
            return st.need(self, pos, pos)
        elif pos < st.fail_pos:
            return FAIL
        else:
            return st.fail(pos, self.expected)
        after = self.after
        if after is None or (pos < n and text[pos] not in SPACE_CHARS):
            return pos
        end = SPACE.match(text, pos).end()  # type: ignore[union-attr]
        return st.need(after, end, end) if end == n and st.partial else end

    def describe(self) -> str:
        shown = quote(self.text)
        return ("space " if self.before else "") + shown + (" space" if self.after else "")

    def prefix(self) -> tuple[str, bool]:
        return ("", False) if self.before else (self.text, False)

    def opening_chars(self) -> frozenset[str] | None:
        if not self.text:
            return None
        return frozenset(SPACE_CHARS + self.text[0]) if self.before else frozenset(self.text[0])

    def with_space(self, before: bool, after: bool) -> Expr | None:
        return None  # already fused


def held_back(text: str, start: int, end: int, markers: tuple[str, ...]) -> int:
    """Return the length of the longest tail of text[start:end] that begins some marker
    (and is shorter than it)."""
    firsts, tails, longest = marker_index(markers)
    held = end
    # The earliest tail that begins a marker is the longest: each first character's
    # candidates are found by str.find (a regex's finditer cost more than the whole search).
    low = end - longest + 1
    if low < start:
        low = start
    for first in firsts:
        at = text.find(first, low, held)
        while at >= 0:
            if text[at:end] in tails:
                held = at
                break
            at = text.find(first, at + 1, held)
    return end - held


def beginnings_pattern(markers: tuple[str, ...]) -> str:
    """Return a regex matching, up to the end of the text, a proper beginning of one of the
    markers (one character or more): the markers' trie, so that a search tries each of its
    characters once (an alternation of every beginning tries them all at each position)."""
    trie: dict[str, Any] = {}
    for marker in markers:
        node = trie
        for char in marker:
            node = node.setdefault(char, {})
    return f"(?:{_branches(trie)})" if any(trie.values()) else "(?!)"


def _branches(node: dict[str, Any]) -> str:
    """Return the alternatives of a trie node's children that a proper beginning may reach
    (a child without children ends a marker: the whole marker is no proper beginning)."""
    return "|".join(re.escape(char) + (rf"(?:\Z|{inner})" if (inner := _branches(child))
                                       else r"\Z")
                    for char, child in node.items() if child)


def waiting_before_markers(text: str, at: int, markers: tuple[str, ...]) -> int:
    """Return where a scan up to markers that waited at `at` waits on text holding none of
    them whole after it: before the tail that begins one (no marker can begin before `at`,
    or the scan would have held it back)."""
    return len(text) - held_back(text, at, len(text), markers)


@lru_cache(maxsize=1024)
def marker_index(markers: tuple[str, ...]) -> tuple[str, frozenset[str], int]:
    """Index markers for held_back (streams ask on every chunk): their first characters,
    every proper beginning of one (a set lookup per candidate tail), the longest's length."""
    firsts = "".join(dict.fromkeys(marker[0] for marker in markers if marker))
    tails = frozenset(marker[:size] for marker in markers for size in range(1, len(marker)))
    return firsts, tails, max((len(m) for m in markers), default=0)


def first_chars(markers: tuple[str, ...]) -> frozenset[str]:
    """Return the characters the markers start with: text without them holds no marker and
    no marker's beginning (what a scan up to the markers waits for)."""
    return frozenset(marker[0] for marker in markers if marker)


class Until(Expr):
    """Match everything up to (not including) the first of the markers, or to the end."""

    __slots__ = ("markers", "pattern", "wake")

    def __init__(self, markers: tuple[str, ...]) -> None:
        self.markers = markers
        self.pattern = re.compile("|".join(re.escape(m) for m in markers))
        self.wake = first_chars(markers)

    def match(self, st: MatchState, pos: int) -> int:
        seen = st.memo.get((self, st.base + pos)) if st.memo else None
        start = pos if seen is None else seen - st.base
        if len(self.markers) == 1:
            found = st.text.find(self.markers[0], start)
        else:
            hit = self.pattern.search(st.text, start)
            found = hit.start() if hit else -1
        if found >= 0:
            return found
        if not st.partial:
            return st.n
        # A tail that may be the start of a marker is not content yet: hold it back.
        safe = st.n - held_back(st.text, start, st.n, self.markers)
        if st.memo is not None and safe - pos > RESCAN_LIMIT:
            # Held back this far, it will be matched from pos again: no marker starts
            # before safe, so the next chunk's search may start there.
            st.memo[(self, st.base + pos)] = st.base + safe
        return st.need(self, safe, safe)

    def waiting_end(self, text: str, at: int) -> int:
        # Without a whole marker in the new text, the scan waits before the tail that may
        # still begin one (a chunk ending in half a marker reads on, as match does).
        rest = text[at:] if at else text
        if self.wake is not None and self.wake.isdisjoint(rest):  # the fast answer
            return len(text)
        return -1 if self.pattern.search(rest) else waiting_before_markers(text, at, self.markers)

    def may_fail(self, text: str, pos: int) -> bool:
        return False  # it reads to a marker or to the end

    def describe(self) -> str:
        return "until(" + ", ".join(quote(m) for m in self.markers) + ")"

    def never_commits(self) -> bool:
        return True


class Rest(Expr):
    """Match everything to the end of the input."""

    __slots__ = ()
    wake: frozenset[str] | None = frozenset()  # nothing that comes can end it early

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial:
            return st.need(self, st.n, st.n)
        return st.n

    def may_fail(self, text: str, pos: int) -> bool:
        return False

    def describe(self) -> str:
        return "rest"

    def never_commits(self) -> bool:
        return True


class Space(Expr):
    """Match optional whitespace (space, tab, newlines)."""

    __slots__ = ()
    is_space = True
    once_is_twice = True

    def match(self, st: MatchState, pos: int) -> int:
        if pos < st.n and st.text[pos] not in SPACE_CHARS:
            return pos  # most places have none: no regex call
        found = SPACE.match(st.text, pos)
        end = found.end() if found else pos
        if st.partial and end == st.n:
            return st.need(self, end, end)
        return end

    def describe(self) -> str:
        return "space"

    def idle_at_end(self) -> bool:
        return True

    def skipped_chars(self) -> frozenset[str] | None:
        return SKIPPED_SPACE


class Regex(Expr):
    """Match a regular expression (for short tokens such as call ids)."""

    __slots__ = ("pattern", "max_length")

    def __init__(self, pattern: str, max_length: int = 64) -> None:
        self.pattern = re.compile(pattern)
        self.max_length = max_length

    def match(self, st: MatchState, pos: int) -> int:
        found = self.pattern.match(st.text, pos)
        if st.partial and (found.end() == st.n if found else st.n - pos < self.max_length) \
                and not st.ended:
            # Python's re cannot say "prefix of a match": near the end, wait for more input
            # (none comes after a text that ended: it decides as a whole run).
            return st.need(self, pos, pos)
        if found is None:
            if pos < st.fail_pos:
                return FAIL  # not recorded: no message to build
            return st.fail(pos, f"/{self.pattern.pattern}/")
        return found.end()

    def describe(self) -> str:
        return f"/{self.pattern.pattern}/"

    def never_commits(self) -> bool:
        return True


class End(Expr):
    """Match the end of the input."""

    __slots__ = ()
    once_is_twice = True

    def match(self, st: MatchState, pos: int) -> int:
        if pos < st.n:
            return st.fail(pos, "end of input")
        if st.partial:
            return st.need(self, pos, pos)
        return pos

    def describe(self) -> str:
        return "end"

    def idle_at_end(self) -> bool:
        return True

    def opening_chars(self) -> frozenset[str] | None:
        return frozenset()  # fails before any character

    def never_commits(self) -> bool:
        return True


