"""PEG expressions: the base class and the combinators (sequence, choice, repetition...).

Every expression matches at a position of `MatchState.text` and returns the end position,
FAIL, or NEED (the input ended before the outcome was known; only in partial mode). On NEED
the expression leaves in the state the expression that continues the parse and where: this is
what lets a stream resume from its last stable point instead of re-parsing from the start.

`commit()` marks the point after which the enclosing alternatives are not tried any more:
a failure after it is a parse error, and a stream may commit to what was parsed before it.
"""

from __future__ import annotations

import os
import re
from typing import Any, TypeVar

from analyzer.peg.state import FAIL, NEED, UNTRACED, MatchState

# Resume points are kept, one object per structure (`resumed_sequence`, `resumed_scope`, and
# the captures' own): a stream whose run stops where an earlier one did, in kind, gets the
# same objects back, so a run that then stops there again resumes from the very expression it
# was given (nothing is rebuilt on the way up, and the stream sees that nothing moved). At most
# this many of each kind: a leaf in a new state each run (a JSON scan) would otherwise keep
# every one, and the tables (one per process, for every grammar) would keep grammars no longer
# used; a table starts over when full (it only ever saves building an object). A stream keeps
# a few hundred (1-byte chunks of the 25k bench outputs: at most ~850 sequences). Threads share
# the tables: two that build the same resume point at once keep one, and use both (equal).
RESUMES_KEPT = 2048

# Precedence levels for the readable dump: what needs parentheses where.
CHOICE_LEVEL = 1
SEQUENCE_LEVEL = 2
POSTFIX_LEVEL = 3
ATOM_LEVEL = 4


class Expr:
    """A parsing expression; `a + b` is a sequence, `a | b` an ordered choice."""

    __slots__ = ()
    level = ATOM_LEVEL
    # For a leaf that has consumed all the input it was given and needs more: the characters
    # whose arrival could change that (None: any could). A stream whose next chunk holds none
    # of them knows the outcome without running the grammar (see parsing/stream.py).
    wake: frozenset[str] | None = None
    # True for an expression that matches exactly its prefix() text and does nothing else
    # (a literal): a choice that has seen that text at the position takes it without a call.
    plain = False
    # True for a leaf whose state moves as it reads (a JSON scan: in a string, past it):
    # a stream asks it read_on, not waiting_end.
    moves = False
    # For a leaf whose waiting_end, on text holding none of this character after `at`, reads
    # to the text's end short of its trailing whitespace (scanning.SPACE_CHARS): a value's
    # text and its one lead character, `<`. A stream answers its usual chunk with that,
    # without a call ("": ask waiting_end).
    reads_on_without = ""

    def match(self, st: MatchState, pos: int) -> int:
        """Match at pos; return the end position, FAIL or NEED."""
        raise NotImplementedError

    def waiting_end(self, text: str, at: int) -> int:
        """For a leaf whose input ran out at `at` in the last run: where it would run out
        again on text (the same text up to the end of the last run, then more), or -1 when
        the new text may decide something. A stream uses it to skip runs that could not
        change anything (see parsing/stream.py).

        The default reads `wake`: text holding none of those characters after `at` changes
        nothing but how far the leaf reads."""
        wake = self.wake
        if wake is None or not wake.isdisjoint(text[at:] if at else text):
            return -1
        return len(text)

    def read_on(self, text: str) -> tuple[int, Expr]:
        """For a leaf that moves, resumed at text[0] by a stream: how far it would read text
        before running out again (-1: the new text may decide something), and the leaf that
        would wait there (itself, or itself in its new state)."""
        return -1, self

    def may_fail(self, text: str, pos: int) -> bool:
        """Tell whether a match at pos of text, which more input will follow, may fail (False:
        more input only moves where it ends). A choice held open by such an alternative stays
        held however the input goes on."""
        return True

    def matches_anywhere(self) -> bool:
        """Tell whether a match at any position of any text, partial or not, returns an end
        recording no failure (never FAIL, never NEED): a held choice keeps such an
        alternative without running it."""
        return False

    def waiting_form(self) -> str | None:
        """A regex of texts (from the match's position to the end of a partial text) on
        which an untraced partial match returns NEED, recording no failure, and more input
        may still fail it (may_fail): a held choice keeps such an alternative, shaky,
        without running it. None: no such regex (the choice runs it)."""
        return None

    def describe(self) -> str:
        """Return this expression in readable PEG notation."""
        raise NotImplementedError

    def children(self) -> tuple[Expr, ...]:
        """Return the sub-expressions (for walking the tree)."""
        return ()

    def prefix(self) -> tuple[str, bool]:
        """Return the text every match starts with, and whether a match is exactly that text.

        Choices use it to skip alternatives with one str.startswith call."""
        return "", False

    def first_leaf(self) -> Expr | None:
        """Return the leaf every match of this expression runs first, at the same position,
        and fails when it fails (None: none such). A leaf is its own."""
        return None if self.children() else self

    # What a whole (not partial) parse may skip without running an expression. Each answer
    # promises a clean failure: FAIL with no commit (events it adds, the combinator that
    # skips it deletes anyway). The defaults promise nothing.

    def opening_chars(self) -> frozenset[str] | None:
        """Return the characters a match can start at: before any other character, this fails
        cleanly (None: any character may do, or an empty match)."""
        return None

    def matches_at_end(self) -> bool:
        """Tell whether this may do anything but fail cleanly at the end of the input."""
        return True

    def skipped_chars(self) -> frozenset[str] | None:
        """For an expression that never commits and consumes only these characters (optional
        whitespace; a lookahead: none), the characters; None for any other."""
        return None

    def never_commits(self) -> bool:
        """Tell whether matching this can never commit (a leaf of peg/scanning.py, or only
        such leaves and lookaheads)."""
        return self.skipped_chars() is not None

    def idle_at_end(self) -> bool:
        """Tell whether a whole run that records no failures matches this at the end of the
        input as nothing, recording nothing (a rule's sequence skips it there)."""
        return False

    # Optional whitespace (sequence() fuses it with a literal next to it).
    is_space = False
    # True for a leaf that, right after itself, matches nothing more and records nothing (the
    # first took all whitespace; the end stays the end): a whole run matches it once.
    once_is_twice = False

    def with_space(self, before: bool, after: bool) -> Expr | None:
        """Return one leaf matching `space? self space?` (whitespace before and/or after),
        or None when this expression has none (only a literal has)."""
        return None

    def __add__(self, other: Expr) -> Expr:
        return sequence(self, other)

    def __or__(self, other: Expr) -> Expr:
        return choice(self, other)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"


def wrap(expr: Expr, level: int) -> str:
    """Describe expr, parenthesized if it binds looser than level."""
    text = expr.describe()
    return f"({text})" if expr.level < level else text


class Wrapper(Expr):
    """An expression around one `item` that starts, ends and commits where its item does: the
    static questions a whole parse asks before it matches get the item's answers."""

    __slots__ = ()
    item: Expr

    def opening_chars(self) -> frozenset[str] | None:
        return self.item.opening_chars()

    def matches_at_end(self) -> bool:
        return self.item.matches_at_end()

    def never_commits(self) -> bool:
        return self.item.never_commits()


class Eps(Expr):
    """Match the empty string."""

    __slots__ = ()

    def match(self, st: MatchState, pos: int) -> int:
        return pos

    def describe(self) -> str:
        return "eps"

    def matches_anywhere(self) -> bool:
        return True

    def idle_at_end(self) -> bool:
        return True

    def never_commits(self) -> bool:
        return True

    def prefix(self) -> tuple[str, bool]:
        return "", True


EPS = Eps()


class Commit(Expr):
    """Match nothing; from here on, failing is an error rather than a cue to backtrack."""

    __slots__ = ()

    def match(self, st: MatchState, pos: int) -> int:
        st.commits += 1
        return pos

    def describe(self) -> str:
        return "commit"


class Sequence(Expr):
    """Match every item in order."""

    __slots__ = ("items",)
    level = SEQUENCE_LEVEL

    def __init__(self, items: tuple[Expr, ...]) -> None:
        self.items = items

    def match(self, st: MatchState, pos: int) -> int:
        if not st.partial:  # no NEED to resume from: no item count to keep
            for item in self.items:
                pos = item.match(st, pos)
                if pos < 0:
                    return pos
            return pos
        items = self.items
        index = 0
        for item in items:
            end = item.match(st, pos)
            if end < 0:
                if end == NEED:
                    # Resume with what item index left plus the items after it, flattened
                    # as continue_sequence does (inlined: this runs in every frame a NEED
                    # unwinds through, and the kept resume point is usually there).
                    head = st.resume
                    if index == 0 and head is items[0]:
                        st.resume = self  # nothing moved: a stream re-runs the same expression
                    else:
                        rest = items[index + 1 :]
                        if rest:
                            rest = (head.items + rest if isinstance(head, Sequence)
                                    else (head, *rest))
                            st.resume = _SEQUENCES.get(rest) or resumed_sequence(rest)
                return end
            pos = end
            index += 1
        return pos

    def describe(self) -> str:
        # A fused token (the only item at this level inside a sequence) reads as the items
        # it stands for.
        return " ".join(item.describe() if item.level == SEQUENCE_LEVEL
                        else wrap(item, POSTFIX_LEVEL) for item in self.items)

    def children(self) -> tuple[Expr, ...]:
        return self.items

    def first_leaf(self) -> Expr | None:
        return self.items[0].first_leaf()

    def opening_chars(self) -> frozenset[str] | None:
        # Leading whitespace and lookaheads consume nothing else: the first item that must
        # consume decides, with the whitespace it may follow.
        skipped: frozenset[str] = frozenset()
        for item in self.items:
            opening = item.opening_chars()
            if opening is not None:
                return skipped | opening
            more = item.skipped_chars()
            if more is None:
                return None
            skipped |= more
        return None

    def matches_at_end(self) -> bool:
        # At the end nothing consumes: the first item that cannot match there decides,
        # unless one before it may commit.
        for item in self.items:
            if not item.matches_at_end():
                return False
            if not item.never_commits():
                return True
        return True

    def never_commits(self) -> bool:
        return all(item.never_commits() for item in self.items)

    def skipped_chars(self) -> frozenset[str] | None:
        return _all_skipped(self.items)

    def prefix(self) -> tuple[str, bool]:
        text = ""
        for item in self.items:
            lead, exact = item.prefix()
            text += lead
            if not exact:
                return text, False
        return text, True


class RuledSequence(Sequence):
    """A sequence holding rules (sequence() builds one where an item is a rule). A whole run
    that records no failures names no rules: it matches their bodies, and nested sequences,
    as items of this one (flat_items: a call per rule and per sequence less); other runs
    match it as a sequence."""

    __slots__ = ("flat",)

    def __init__(self, items: tuple[Expr, ...]) -> None:
        self.items = items
        # Found at first use (rule bodies come late): each item, and whether it is idle at
        # the end of the input.
        self.flat: tuple[tuple[Expr, bool], ...] | None = None

    def match(self, st: MatchState, pos: int) -> int:
        if st.partial or st.fail_pos != UNTRACED:
            return Sequence.match(self, st, pos)
        n = st.n
        for item, idle in self.flat or self._flatten():
            if idle and pos == n:
                continue  # it would match nothing there (the loops after a last call)
            pos = item.match(st, pos)
            if pos < 0:
                return pos
        return pos

    def _flatten(self) -> tuple[tuple[Expr, bool], ...]:
        self.flat = tuple((item, item.idle_at_end()) for item in flat_items(self.items,
                                                                              frozenset()))
        return self.flat


# What an item can open with (opening_chars) and whether it may match at the end of the input.
Opening = tuple[frozenset[str] | None, bool]


def opening_of(item: Expr) -> Opening:
    """Find, once per expression (rule bodies may be defined late), what a whole parse reads
    to skip an item that cannot match: before a character outside the opening characters,
    or at the end of the input when it cannot match there, it would fail cleanly."""
    return item.opening_chars(), item.matches_at_end()


def flat_items(items: tuple[Expr, ...], inside: frozenset[int]) -> tuple[Expr, ...]:
    """Items as a whole run that records no failures may match them: a rule as its body
    (it only names failures, and a NEED, which such a run never meets), a sequence as its
    items, recursively (a rule inside itself is kept: it would never end); whitespace right
    after whitespace, or the end right after the end, goes (once_is_twice)."""
    flat: list[Expr] = []
    for item in items:
        body, within = item, inside
        while type(body) is Rule and body.body is not None and id(body) not in within:
            within |= {id(body)}
            body = body.body
        if type(body) is Sequence or type(body) is RuledSequence:
            flat.extend(flat_items(body.items, within))
        elif not (body.once_is_twice and flat and type(flat[-1]) is type(body)):
            flat.append(body)
    return tuple(flat)


def _all_skipped(items: tuple[Expr, ...]) -> frozenset[str] | None:
    """The characters items may consume if each only skips (None if one does more)."""
    skipped: frozenset[str] = frozenset()
    for item in items:
        more = item.skipped_chars()
        if more is None:
            return None
        skipped |= more
    return skipped


def resumed(st: MatchState) -> Expr:
    """The expression a NEED left in the state (typed there as a protocol, to avoid a cycle)."""
    resume = st.resume
    assert isinstance(resume, Expr), f"a NEED left {resume!r} to resume from, not an expression"
    return resume


def continue_sequence(head: Expr, rest: tuple[Expr, ...]) -> Expr:
    """Build `head rest...`, flattening so resumed expressions never nest deeper (the resume
    point of a sequence whose item before rest left head)."""
    if not rest:
        return head
    items = head.items + rest if isinstance(head, Sequence) else (head, *rest)
    return _SEQUENCES.get(items) or resumed_sequence(items)


# The kept resume points (see RESUMES_KEPT), by what they are built from. Callers look
# them up first (a hit costs no call) and build through these functions on a miss.
_SEQUENCES: dict[tuple[Expr, ...], Sequence] = {}
_SCOPES: dict[tuple[tuple[str, ...], Expr], Scope] = {}
_SCOPED: dict[tuple[tuple[str, ...], Expr], Expr] = {}
Kept = TypeVar("Kept", bound=Expr)
# Every table of kept resume points (the captures module adds its own).
RESUME_TABLES: list[dict[Any, Any]] = [_SEQUENCES, _SCOPES, _SCOPED]
# Tables that hold kept resume points learned from runs (a stream's decided runs:
# parsing/regexrun.py): started over with any of the tables above, as a run would then build
# new objects where they would give the old ones.
RESUME_DEPENDENTS: list[dict[Any, Any]] = []
# How many times the tables above started over (a stream's own table of learned outcomes
# starts over when this moves).
RESUME_EPOCH: list[int] = [0]


def keep_resume(table: dict[Any, Any], key: Any, resume: Kept) -> Kept:
    """Keep resume under key in one of the tables above, starting it over when full."""
    if len(table) >= RESUMES_KEPT:
        table.clear()
        for dependent in RESUME_DEPENDENTS:
            dependent.clear()
        RESUME_EPOCH[0] += 1
    table[key] = resume
    return resume


def forget_resume_points() -> None:
    """Start every table of kept resume points over (a stream's checks of one object per
    structure start from here; they only ever save building objects)."""
    for table in (*RESUME_TABLES, *RESUME_DEPENDENTS):
        table.clear()
    RESUME_EPOCH[0] += 1


def resumed_sequence(items: tuple[Expr, ...]) -> Sequence:
    """The resume point `items...`: one object for the same items (see RESUMES_KEPT)."""
    return _SEQUENCES.get(items) or keep_resume(_SEQUENCES, items, Sequence(items))


def resumed_scope(key: tuple[tuple[str, ...], Expr]) -> Scope:
    """The resume point body inside the rules names, key (names, body): one object for the
    same names and body (see RESUMES_KEPT)."""
    return _SCOPES.get(key) or keep_resume(_SCOPES, key, Scope(*key))


class Choice(Expr):
    """Ordered choice: the first alternative that matches wins."""

    __slots__ = ("alternatives", "leads", "by_char", "unled", "everything", "shared",
                 "shortest", "open_leads", "by_start", "unstarted", "at_end", "narrowed",
                 "later")
    level = CHOICE_LEVEL

    def __init__(self, alternatives: tuple[Expr, ...]) -> None:
        self.alternatives = alternatives
        # (alternative, its literal prefix, what a trace says is expected, the prefix's
        # length): computed at first use, because rule bodies may be defined after the
        # choice is built.
        self.leads: tuple[tuple[Expr, str, str, int], ...] | None = None
        # The alternatives (indices) worth trying before each character: those whose prefix
        # starts with it, and those without a prefix (`unled`, before any other character).
        self.by_char: dict[str, tuple[int, ...]] = {}
        self.unled: tuple[int, ...] = ()
        self.everything: tuple[int, ...] = ()
        # The leaf every alternative runs first (a JSON key that must not be a reserved
        # one, noted or not): where it fails, so do they all.
        self.shared: Expr | None = None
        self.shortest = 0  # the shortest prefix (0: an alternative has none)
        # Before each character, the prefix the alternatives worth trying there share ("":
        # all of them, at the end of the input): text shorter than the shortest prefix is
        # inside every one of them exactly when this begins with it (one startswith call).
        self.open_leads: dict[str, str] = {}
        # A whole parse's index (opening_chars): the alternatives worth trying before each
        # character, before any other (`unstarted`), and at the end of the input.
        self.by_start: dict[str, tuple[int, ...]] = {}
        self.unstarted: tuple[int, ...] = ()
        self.at_end: tuple[int, ...] = ()
        # The choices a held run narrowed this one to, by the alternatives (indices) they
        # keep: built (and their leads found) once, the same object for every run that
        # narrows it so.
        self.narrowed: dict[tuple[int, ...], Choice] = {}
        # After each alternative, the ones a held run asks whether they may still match,
        # found with the leads: (index, alternative, literal prefix, its length, whether it
        # matches anywhere, the regex of the texts it waits on: see waits_on).
        self.later: tuple[tuple[Later, ...], ...] = ()

    def match(self, st: MatchState, pos: int) -> int:
        leads = self.leads or self._compute_leads()
        text = st.text
        # A run that records no failures need not look at alternatives the next character
        # (or their shared first leaf) rules out; one that does (a trace) tries them all, to
        # list what it expected.
        if st.fail_pos == UNTRACED:
            if self.shared is not None and self.shared.match(st, pos) == FAIL:
                return FAIL
            if st.partial:
                order = self.by_char.get(text[pos], self.unled) if pos < st.n else self.everything
            elif pos < st.n:
                order = self.by_start.get(text[pos], self.unstarted)
            else:
                order = self.at_end
            if not order:
                return FAIL
        else:
            order = self.everything
        events_at_start = len(st.events)
        if (st.partial and st.n - pos < self.shortest and self.open_leads.get(
                text[pos] if pos < st.n and st.fail_pos == UNTRACED else "", "").startswith(
                    text[pos:])):
            # The input ends inside every prefix: nothing is decided (a stream at the `<`
            # of a tag), and the choice waits as itself (st.need, inlined: nothing was
            # recorded since events_at_start).
            st.resume = st.leaf = self
            st.resume_pos = st.need_end = pos
            st.commit_events = events_at_start
            if events_at_start < st.unsafe_from:
                st.unsafe_from = events_at_start
            return NEED
        for index in order:
            alternative, lead, expected, size = leads[index]
            if lead:
                if text.startswith(lead, pos):
                    if alternative.plain:
                        return pos + size
                elif not (st.partial and st.n - pos < size and lead.startswith(text[pos:])):
                    if pos >= st.fail_pos:
                        st.fail(pos, expected)
                    continue
            commits = st.commits
            end = alternative.match(st, pos)
            if end >= 0:
                return end
            if end == NEED:
                if st.commits == commits:
                    self.hold_unless_decided(st, pos, index, events_at_start)
                return NEED
            del st.events[events_at_start:]
            if st.commits != commits:
                return FAIL
        return FAIL

    def picks_first(self) -> bool:
        """Tell whether an untraced partial run, where the text holds the first alternative's
        literal prefix and at least the longest prefix's length, runs that alternative
        before anything else (no shared first leaf is tried before it): a caller that knows
        what it returns may run it, then hold the choice as match() would
        (hold_unless_decided with index 0)."""
        leads = self.leads or self._compute_leads()
        return self.shared is None and len(self.alternatives) == len(leads)

    def waiting_end(self, text: str, at: int) -> int:
        # Still inside every prefix worth trying: the choice waits where it did.
        rest = text[at:]
        if self.leads is None or len(rest) >= self.shortest:
            return -1
        return at if self.open_leads.get(rest[:1], "").startswith(rest) else -1

    def _compute_leads(self) -> tuple[tuple[Expr, str, str, int], ...]:
        """Find each alternative's literal prefix once, and index them by first character."""
        leads = [(alt, alt.prefix()[0]) for alt in self.alternatives]
        self.shortest = min(len(lead) for _, lead in leads)
        self.everything = tuple(range(len(leads)))
        self.unled = tuple(i for i, (_, lead) in enumerate(leads) if not lead)
        for char in {lead[0] for _, lead in leads if lead}:
            self.by_char[char] = tuple(
                i for i, (_, lead) in enumerate(leads) if not lead or lead[0] == char)
        firsts = {id(alt.first_leaf()): alt.first_leaf() for alt in self.alternatives}
        self.shared = next(iter(firsts.values())) if len(firsts) == 1 else None
        self._index_openings()
        self._index_open_leads([lead for _, lead in leads])
        asked = [(alt, lead, len(lead), alt.matches_anywhere(), waits_on(alt))
                 for alt, lead in leads]
        self.later = tuple(tuple((at, *asked[at]) for at in range(index + 1, len(leads)))
                           for index in range(len(leads)))
        self.leads = tuple((alt, lead, f"`{lead}`", len(lead)) for alt, lead in leads)
        return self.leads

    def _index_open_leads(self, leads: list[str]) -> None:
        """Find, before each character, the prefix shared by the alternatives worth trying
        there (by_char's), and at the end of the input all of them's (see open_leads). Only
        asked where every alternative has a prefix (shortest > 0): then a text shorter than
        the shortest is inside each of them exactly when it begins their shared prefix."""
        self.open_leads[""] = os.path.commonprefix(leads)
        for char, order in self.by_char.items():
            self.open_leads[char] = os.path.commonprefix([leads[at] for at in order])

    def _index_openings(self) -> None:
        """Index the alternatives by the characters they can open with, for whole parses."""
        openings = [alt.opening_chars() for alt in self.alternatives]
        self.unstarted = tuple(i for i, chars in enumerate(openings) if chars is None)
        self.at_end = tuple(i for i, alt in enumerate(self.alternatives) if alt.matches_at_end())
        for char in frozenset().union(*(chars for chars in openings if chars is not None)):
            self.by_start[char] = tuple(
                i for i, chars in enumerate(openings) if chars is None or char in chars)

    def hold_unless_decided(self, st: MatchState, pos: int, index: int, events: int) -> None:
        """Keep the resume point inside alternative index only if no later one can match.

        A later alternative whose literal prefix the text already contradicts is out without
        running it (a stream asks this again on every chunk while the choice is open)."""
        text, left = st.text, st.n - pos
        # An input that ends inside an alternative's literal prefix cannot fail it yet: only
        # the others are run to see. (A held run is partial: the text may go on.)
        later = []
        rest = None
        for at, alt, lead, size, anywhere, waits in self.later[index]:
            if anywhere:
                later.append(at)  # it would match (an alternative noting what is missing)
            elif not lead or text.startswith(lead, pos):
                if waits is not None and waits.fullmatch(text, pos) is not None:
                    later.append(at)  # it would wait, and may still fail (as _may_match)
                    st.shaky = True
                elif _may_match(alt, st, pos):
                    later.append(at)
            elif st.partial and left < size:
                if rest is None:
                    rest = text[pos:]
                if lead.startswith(rest):
                    later.append(at)
                    st.shaky = True  # more text may contradict its prefix
        if not later:
            return
        held: Choice | None
        if index == 0 and len(later) == len(self.alternatives) - 1:
            held = self  # all still open: the same choice (a stream's resume point then
            # stays the same object, and nothing around it is rebuilt)
        else:
            kept_ones = (index, *later)
            held = self.narrowed.get(kept_ones)
            if held is None:
                held = self.narrowed[kept_ones] = Choice(
                    tuple(self.alternatives[at] for at in kept_ones))
        st.resume = held  # st.hold_back, inlined (a held stream asks this every chunk)
        st.resume_pos = pos
        st.commit_events = events
        if events < st.unsafe_from:
            st.unsafe_from = events

    def describe(self) -> str:
        return " | ".join(wrap(alt, SEQUENCE_LEVEL) for alt in self.alternatives)

    def children(self) -> tuple[Expr, ...]:
        return self.alternatives

    def prefix(self) -> tuple[str, bool]:
        return os.path.commonprefix([alt.prefix()[0] for alt in self.alternatives]), False

    def opening_chars(self) -> frozenset[str] | None:
        chars: frozenset[str] = frozenset()
        for alt in self.alternatives:
            opening = alt.opening_chars()
            if opening is None:
                return None
            chars |= opening
        return chars

    def matches_at_end(self) -> bool:
        return any(alt.matches_at_end() for alt in self.alternatives)

    def never_commits(self) -> bool:
        return all(alt.never_commits() for alt in self.alternatives)

    def skipped_chars(self) -> frozenset[str] | None:
        return _all_skipped(self.alternatives)


# What a held choice asks of an alternative after the one that waits (Choice.later).
Later = tuple[int, Expr, str, int, bool, "re.Pattern[str] | None"]


def waits_on(expr: Expr) -> re.Pattern[str] | None:
    """The regex of expr.waiting_form(), compiled (None: it has none)."""
    form = expr.waiting_form()
    return None if form is None else re.compile(form)


def _may_match(expr: Expr, st: MatchState, pos: int) -> bool:
    """Tell whether expr does not fail outright at pos, leaving the state as it was (and
    noting, as shaky, an undecided outcome that more input may turn into a failure)."""
    # The NEED bookkeeping (what need() and hold_back() set) is snapshotted and put back
    # here, not in a MatchState method: a held choice asks this on every run of a stream.
    saved = (st.resume, st.resume_pos, st.commit_events, st.need_end, st.unsafe_from, st.leaf)
    events = len(st.events)
    commits = st.commits
    outcome = expr.match(st, pos)
    del st.events[events:]
    st.commits = commits
    (st.resume, st.resume_pos, st.commit_events, st.need_end, st.unsafe_from, st.leaf) = saved
    if outcome == NEED and expr.may_fail(st.text, pos):
        st.shaky = True
    return outcome != FAIL


class Optional(Expr):
    """Match the item or nothing."""

    __slots__ = ("item", "opening")
    level = POSTFIX_LEVEL

    def __init__(self, item: Expr) -> None:
        self.item = item
        self.opening: Opening | None = None  # found at first use (see opening_of)

    def match(self, st: MatchState, pos: int) -> int:
        if not st.partial and st.fail_pos == UNTRACED:
            chars, at_end = self.opening or self._find_opening()
            if (st.text[pos] not in chars if chars is not None and pos < st.n
                    else pos == st.n and not at_end):
                return pos  # the item cannot match here (see opening_of)
        events_at_start = len(st.events)
        commits = st.commits
        end = self.item.match(st, pos)
        if end >= 0:
            return end
        if end == NEED:
            if st.commits == commits:
                st.hold_back(self, pos, events_at_start)
            return NEED
        del st.events[events_at_start:]
        return FAIL if st.commits != commits else pos

    def _find_opening(self) -> Opening:
        self.opening = opening_of(self.item)
        return self.opening

    def idle_at_end(self) -> bool:
        return not self.item.matches_at_end()  # skipped there (see opening_of)

    def describe(self) -> str:
        return wrap(self.item, ATOM_LEVEL) + "?"

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def skipped_chars(self) -> frozenset[str] | None:
        return self.item.skipped_chars()

    def never_commits(self) -> bool:
        return self.item.never_commits()


class Repeat(Expr):
    """Match the item at least `least` and at most `most` times (None: no limit)."""

    __slots__ = ("item", "least", "most", "opening", "resumes")
    level = POSTFIX_LEVEL

    def __init__(self, item: Expr, least: int, most: int | None) -> None:
        self.item = item
        self.least = least
        self.most = most
        self.opening: Opening | None = None  # found at first use (see opening_of)
        # The repetitions left after some items, by (least, most): few, built once.
        self.resumes: dict[tuple[int, int | None], Repeat] | None = None

    def match(self, st: MatchState, pos: int) -> int:
        count = 0
        # A whole parse stops where the item cannot start (it would fail cleanly there):
        # see opening_of (inlined: a loop over JSON members asks at every member).
        chars, at_end = (None, True) if st.partial or st.fail_pos != UNTRACED else (
            self.opening or self._find_opening())
        text, n = st.text, st.n
        while self.most is None or count < self.most:
            if (text[pos] not in chars if chars is not None and pos < n
                    else pos == n and not at_end):
                return pos if count >= self.least else FAIL
            events_at_start = len(st.events)
            commits = st.commits
            end = self.item.match(st, pos)
            if end == NEED:
                if not count and not self.least and st.commits == commits:
                    # Held back at the first item: this repetition again, from here (the
                    # resume point a stream runs on every chunk between items; _need's
                    # second case, inlined).
                    return st.hold_back(self, pos, events_at_start)
                if st.commits != commits and self.most is None and not self.least:
                    # Inside an item that can no longer back out: it, then this repetition
                    # (_need's first case, inlined: a value after its argument's name).
                    st.resume = continue_sequence(st.resume, (self,))
                    return NEED
                return self._need(st, pos, count, commits, events_at_start)
            if end < 0:
                del st.events[events_at_start:]
                if count < self.least or st.commits != commits:
                    return FAIL
                return pos
            if end == pos:  # an item matching empty would loop forever
                return pos
            pos = end
            count += 1
        return pos

    def _need(self, st: MatchState, pos: int, count: int, commits: int, events: int) -> int:
        """Continue inside the item if it can no longer back out, else from its start."""
        if st.commits != commits or count < self.least:
            rest = self.remaining(count + 1)
            st.resume = continue_sequence(st.resume, (rest,) if rest is not None else ())
            return NEED
        rest = self.remaining(count)
        assert rest is not None
        return st.hold_back(rest, pos, events)

    def _find_opening(self) -> Opening:
        self.opening = opening_of(self.item)
        return self.opening

    def idle_at_end(self) -> bool:
        return self.least == 0 and not self.item.matches_at_end()  # see opening_of

    def remaining(self, done: int) -> Expr | None:
        """Return the repetition left after `done` items (None when nothing is left): this
        repetition itself when that is the same (no least, no most), so a stream's resume
        point between items stays the same object from item to item."""
        most = None if self.most is None else self.most - done
        if most == 0:
            return None
        if done == 0:
            return self
        least = max(0, self.least - done)
        if least == self.least and most == self.most:
            return self
        resumes = self.resumes
        if resumes is None:
            resumes = self.resumes = {}
        rest = resumes.get((least, most))
        if rest is None:
            rest = resumes[(least, most)] = Repeat(self.item, least, most)
        return rest

    def describe(self) -> str:
        inner = wrap(self.item, ATOM_LEVEL)
        if (self.least, self.most) == (0, None):
            return inner + "*"
        if (self.least, self.most) == (1, None):
            return inner + "+"
        most = "" if self.most is None else str(self.most)
        return f"{inner}{{{self.least},{most}}}"

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def prefix(self) -> tuple[str, bool]:
        return (self.item.prefix()[0] if self.least else ""), False

    def opening_chars(self) -> frozenset[str] | None:
        return self.item.opening_chars() if self.least else None

    def matches_at_end(self) -> bool:
        return self.item.matches_at_end() if self.least else True

    def skipped_chars(self) -> frozenset[str] | None:
        return self.item.skipped_chars()

    def never_commits(self) -> bool:
        return self.item.never_commits()


class Peek(Expr):
    """Succeed without consuming if the item matches here."""

    __slots__ = ("item", "lead")

    def __init__(self, item: Expr) -> None:
        self.item = item
        self.lead: str | None = None  # the item's literal prefix, found at first use

    def match(self, st: MatchState, pos: int) -> int:
        lead = self.lead
        if lead is None:
            lead = self.lead = self.item.prefix()[0]
        if lead and st.fail_pos == UNTRACED and not st.text.startswith(lead, pos) and not (
                st.partial and st.n - pos < len(lead) and lead.startswith(st.text[pos:])):
            return FAIL  # the item cannot match here (a trace runs it, for what it expected)
        events_at_start = len(st.events)
        commits = st.commits
        end = self.item.match(st, pos)
        del st.events[events_at_start:]
        st.commits = commits
        if end == NEED:
            return st.hold_back(self, pos, events_at_start)
        return pos if end >= 0 else FAIL

    def describe(self) -> str:
        return "&" + wrap(self.item, ATOM_LEVEL)

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def skipped_chars(self) -> frozenset[str] | None:
        return frozenset()  # consumes nothing; its item's commits are undone


class Not(Expr):
    """Succeed without consuming if the item does not match here.

    In a stream, a lookahead the input left undecided goes on, at the next chunk, from where
    it stopped (st.memo) instead of from pos: a long lookahead costs linear time, not
    quadratic."""

    __slots__ = ("item", "expected", "opening")

    def __init__(self, item: Expr) -> None:
        self.item = item
        self.expected = ""  # what a trace says, built at the first failure that records it
        self.opening: Opening | None = None  # found at first use (see opening_of)

    def match(self, st: MatchState, pos: int) -> int:
        if not st.partial and st.fail_pos == UNTRACED:
            chars, at_end = self.opening or self._find_opening()
            if (st.text[pos] not in chars if chars is not None and pos < st.n
                    else pos == st.n and not at_end):
                return pos  # the item cannot match here (see opening_of)
            if not st.memo:
                return self._whole(st, pos)
        events_at_start = len(st.events)
        commits = st.commits
        fail_pos, expected = st.fail_pos, st.expected
        noted = len(expected)
        end = self._look(st, pos)
        del st.events[events_at_start:]
        st.commits = commits
        if end == NEED:
            return st.hold_back(self, pos, events_at_start)
        if end == FAIL:
            # The item failing is this lookahead's success, not a failure of the parse: a
            # trace does not show it (a run resumed past the lookahead, as a stream's is,
            # would not see it either, and a break would move with where the run began).
            if fail_pos != UNTRACED:
                st.fail_pos, st.expected = fail_pos, expected
                del expected[noted:]
            return pos
        if pos < st.fail_pos:
            return FAIL  # a farther failure is the one a trace shows (or none is recorded)
        if not self.expected:
            self.expected = "not " + self.item.describe()
        return st.fail(pos, self.expected)

    def _find_opening(self) -> Opening:
        self.opening = opening_of(self.item)
        return self.opening

    def _whole(self, st: MatchState, pos: int) -> int:
        """Match as match() does in a whole run that records no failures, where no earlier
        chunk left a lookahead to go on from: nothing waits (no NEED), nothing is recorded."""
        events_at_start = len(st.events)
        commits = st.commits
        end = self.item.match(st, pos)
        del st.events[events_at_start:]
        st.commits = commits
        return pos if end == FAIL else FAIL

    def idle_at_end(self) -> bool:
        return not self.item.matches_at_end()  # skipped there (see opening_of)

    def _look(self, st: MatchState, pos: int) -> int:
        """Match the item at pos, going on from an earlier chunk's stop if there was one."""
        going_on = st.memo.pop((self, st.base + pos), None) if st.memo else None
        if going_on is None:
            end = self.item.match(st, pos)
        else:
            end = going_on[0].match(st, going_on[1] - st.base)
        if end == NEED and st.memo is not None:
            st.memo[(self, st.base + pos)] = (st.resume, st.base + st.resume_pos)
        return end

    def describe(self) -> str:
        return "!" + wrap(self.item, ATOM_LEVEL)

    def children(self) -> tuple[Expr, ...]:
        return (self.item,)

    def skipped_chars(self) -> frozenset[str] | None:
        return frozenset()  # consumes nothing; its item's commits are undone


class Rule(Expr):
    """A named expression: shown by name in the dump and in error traces."""

    __slots__ = ("name", "body", "visiting", "names")

    def __init__(self, name: str, body: Expr | None = None) -> None:
        self.name = name
        self.body = body
        self.visiting = False  # guards prefix() against recursive rules
        self.names = (name,)  # what a resumed parse keeps of it (a Scope's names)

    def define(self, body: Expr) -> Rule:
        """Set the body later (for recursive rules); return self."""
        self.body = body
        return self

    def match(self, st: MatchState, pos: int) -> int:
        assert self.body is not None, f"rule {self.name} has no body"
        if st.fail_pos == UNTRACED:  # the names only label recorded failures
            end = self.body.match(st, pos)
        else:
            st.rules.append(self.name)
            end = self.body.match(st, pos)
            st.rules.pop()
        if end == NEED:
            resume = st.resume
            st.resume = self if resume is self.body else (
                _SCOPED.get((self.names, resume)) or rescoped(self.names, resume))
        return end

    def describe(self) -> str:
        return self.name

    def children(self) -> tuple[Expr, ...]:
        return (self.body,) if self.body is not None else ()

    def prefix(self) -> tuple[str, bool]:
        if self.body is None or self.visiting:
            return "", False
        self.visiting = True
        try:
            return self.body.prefix()
        finally:
            self.visiting = False

    def opening_chars(self) -> frozenset[str] | None:
        if self.body is None or self.visiting:
            return None
        self.visiting = True
        try:
            return self.body.opening_chars()
        finally:
            self.visiting = False

    def matches_at_end(self) -> bool:
        if self.body is None or self.visiting:
            return True
        self.visiting = True
        try:
            return self.body.matches_at_end()
        finally:
            self.visiting = False

    def skipped_chars(self) -> frozenset[str] | None:
        if self.body is None or self.visiting:
            return None
        self.visiting = True
        try:
            return self.body.skipped_chars()
        finally:
            self.visiting = False

    def never_commits(self) -> bool:
        if self.body is None or self.visiting:
            return False
        self.visiting = True
        try:
            return self.body.never_commits()
        finally:
            self.visiting = False


class Scope(Expr):
    """What is left of named rules in a resumed parse: the body, with the rules' names on the
    trace's stack (one frame for several nested rules)."""

    __slots__ = ("names", "body")

    def __init__(self, names: tuple[str, ...], body: Expr) -> None:
        self.names = names
        self.body = body

    def match(self, st: MatchState, pos: int) -> int:
        if st.fail_pos == UNTRACED:  # the names only label recorded failures
            end = self.body.match(st, pos)
        else:
            depth = len(st.rules)
            st.rules.extend(self.names)
            end = self.body.match(st, pos)
            del st.rules[depth:]
        if end == NEED:
            resume = st.resume
            st.resume = self if resume is self.body else (
                _SCOPED.get((self.names, resume)) or rescoped(self.names, resume))
        return end

    def describe(self) -> str:
        return f"scope({', '.join(self.names)})<{self.body.describe()}>"

    def children(self) -> tuple[Expr, ...]:
        return (self.body,)

    def prefix(self) -> tuple[str, bool]:
        return self.body.prefix()

    def opening_chars(self) -> frozenset[str] | None:
        return self.body.opening_chars()

    def matches_at_end(self) -> bool:
        return self.body.matches_at_end()

    def skipped_chars(self) -> frozenset[str] | None:
        return self.body.skipped_chars()

    def never_commits(self) -> bool:
        return self.body.never_commits()


def head_and_tail(items: tuple[Expr, ...]) -> tuple[Expr, Expr]:
    """Split a sequence's items into its first item and the sequence of the others."""
    rest = items[1:]
    return items[0], (rest[0] if len(rest) == 1 else resumed_sequence(rest))


def rescoped(names: tuple[str, ...], body: Expr) -> Expr:
    """scoped(names, body), kept for the next run that leaves body inside these names."""
    return keep_resume(_SCOPED, (names, body), scoped(names, body))


def scoped(names: tuple[str, ...], body: Expr) -> Expr:
    """Resume body inside named rules, kept flat: nested scopes merge, and a sequence scopes
    its head apart from its tail, so an enclosing sequence flattens it into its own items.

    A stream runs the resumed expression on every chunk; nested wrappers would be walked
    down and back up each time."""
    if isinstance(body, Scope):
        return resumed_scope((names + body.names, body.body))
    if isinstance(body, Sequence):
        items = body.items
        head = items[0]
        head = resumed_scope((names + head.names, head.body)) if isinstance(head, Scope) else (
            scoped(names, head) if isinstance(head, Sequence) else resumed_scope((names, head)))
        tail = items[1] if len(items) == 2 else resumed_sequence(items[1:])
        return resumed_sequence((head, resumed_scope((names, tail))))
    return resumed_scope((names, body))


def sequence(*items: Expr) -> Expr:
    """Match items in order (nested sequences and empty items are flattened away)."""
    flat: list[Expr] = []
    for item in items:
        flat.extend(item.items if isinstance(item, Sequence) else (item,))
    flat = [item for item in flat if not isinstance(item, Eps)]
    if not flat:
        return EPS
    flat = fuse_tokens(flat)
    if len(flat) == 1:
        return flat[0]
    return (RuledSequence if any(type(item) is Rule for item in flat) else Sequence)(tuple(flat))


def fuse_tokens(items: list[Expr]) -> list[Expr]:
    """Replace each literal with the whitespace around it by one leaf (`with_space`)."""
    fused: list[Expr] = []
    index = 0
    while index < len(items):
        item = items[index]
        before = bool(fused) and fused[-1].is_space
        after = index + 1 < len(items) and items[index + 1].is_space
        token = item.with_space(before, after) if before or after else None
        if token is not None:
            if before:
                fused.pop()
            item = token
            index += after
        fused.append(item)
        index += 1
    return fused


def choice(*alternatives: Expr) -> Expr:
    """Try alternatives in order (nested choices are flattened)."""
    flat: list[Expr] = []
    for alternative in alternatives:
        flat.extend(alternative.alternatives if isinstance(alternative, Choice) else (alternative,))
    if not flat:
        raise ValueError("choice() needs at least one alternative")
    return flat[0] if len(flat) == 1 else Choice(tuple(flat))
