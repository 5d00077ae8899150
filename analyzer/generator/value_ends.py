"""Where a tagged value ends when its closing tag is missing or wrong.

A value reads up to its own closing tag, but never across markup that cannot belong to it:
the opening of a declared parameter (`<parameter=unit>`: the model left `</parameter>` out),
or the call's own closing and opening markers when more markup or the end of the output
follows them (`</function>\n</tool_call>`). There the value ends, with a `missing_close`
deviation; a closing tag of another element just before that point (GLM's
`<arg_value>Paris</arg_key>`) is taken as the value's closing, with a `mismatched_close`.
Both are accepted: the value is read as if the template's tag had been there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from analyzer import peg as p
from analyzer.generator.build import Build
from analyzer.peg.scanning import SPACE_CHARS, beginnings_pattern, first_chars
from analyzer.peg.state import MatchState

SPACE = SPACE_CHARS  # what Expr.reads_on_without says a value leaves for its closing


def marker_like(text: str) -> bool:
    """Tell whether text is a bracketed marker (only those are safe to cut values at)."""
    return len(text) > 2 and text[0] in "<[" and text[-1] in ">]"


@dataclass(frozen=True)
class Intruders:
    """The markup a value of one template never runs across."""

    openings: tuple[str, ...]  # declared parameters' openings: always cut
    structural: tuple[str, ...]  # the calls' markers: cut when markup or the end follows
    mismatched: tuple[str, ...]  # other elements' closing tags, taken as the value's close

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        found = sorted({*self.openings, *self.structural}, key=len, reverse=True)
        return re.compile("|".join(map(re.escape, found)))

    @cached_property
    def markers(self) -> tuple[str, ...]:
        return (*self.openings, *self.structural)

    @cached_property
    def leads(self) -> str:
        """The characters every stop and mismatched tag begins with (usually just `<`)."""
        return "".join(sorted({m[0] for m in (*self.markers, *self.mismatched)}))

    @cached_property
    def longest(self) -> int:
        return max(len(m) for m in (*self.markers, *self.mismatched))


def intruders(b: Build, end: str) -> Intruders | None:
    """Return what may stop a value closed by end (None: nothing does)."""
    tools, args = b.analysis.tools, b.analysis.tools.arguments
    prefix, suffix = args.name_prefix.strip(), args.name_suffix.strip()
    openings = tuple(f"{prefix}{name}{suffix}" for name in declared_names(b)
                     if prefix[:1] in ("<", "[")) if prefix else ()
    fmt = tools.format
    calls = (tools.function.close, fmt.per_call_end, fmt.section_end, fmt.per_call_start,
             fmt.section_start)
    structural = tuple(dict.fromkeys(m.strip() for m in calls
                                     if marker_like(m.strip()) and m.strip() != end))
    closers = (suffix, args.value_suffix.strip(), args.typed_value_suffix.strip())
    mismatched = tuple(dict.fromkeys(c for c in closers if c.startswith("</") and c != end
                                     and c not in structural))
    if not openings and not structural:
        return None
    return Intruders(openings, structural, mismatched)


def declared_names(b: Build) -> list[str]:
    """Return every parameter name the request's tools declare."""
    names: list[str] = []
    for tool in b.options.tools:
        properties = p.tool_parameters(tool).get("properties") or {}
        names += [name for name in properties if isinstance(name, str) and name]
    return list(dict.fromkeys(names))


class ValueText(p.Expr):
    """Match a value's text: up to its closing tag, or up to the markup that stops it."""

    __slots__ = ("end", "pad", "stops", "markers", "leads", "wake", "lead", "openers",
                 "stop_openers", "reads_on_without", "held", "reach")

    def __init__(self, end: str, pad: str, stops: Intruders) -> None:
        self.end = end
        self.pad = pad
        self.stops = stops
        self.markers = (pad + end, end, *stops.markers, *stops.mismatched)
        self.leads = "".join(dict.fromkeys(stops.leads + end[:1]))
        self.lead = self.leads if len(self.leads) == 1 else ""  # the usual case: just `<`
        self.reads_on_without = self.lead  # waiting_end's first answer (Expr's protocol)
        # What can move where a waiting value's certain text ends: a marker's first character,
        # or whitespace (trailing whitespace is left for the closing).
        self.wake = first_chars(self.markers) | frozenset(SPACE)
        # Texts that may still grow into a marker (a stream asks at every chunk that holds
        # a `<`): one set lookup instead of a startswith per declared parameter.
        self.openers = beginnings(self.markers, proper=True)
        self.stop_openers = beginnings((*stops.markers, end), proper=False)
        # The tail that may still begin a marker, which _certain_end holds back (a stream
        # asks at every chunk that ends in half a marker), and how far back it may begin.
        self.held = re.compile(beginnings_pattern(self.markers))
        self.reach = max(len(marker) for marker in self.markers)

    def match(self, st: MatchState, pos: int) -> int:
        text = st.text
        own = text.find(self.end, pos)
        limit = own if own >= 0 else st.n
        lead = self.lead
        if text.find(lead, pos, limit) < 0 if lead else not self._has_lead(text, pos, limit):
            cut, decided = -1, True  # _intruder's first answer, without its call
        else:
            cut, decided = self._intruder(st, pos, limit)
        if cut < 0 and own >= 0 and decided:
            padded = self.pad and text.endswith(self.pad, pos, own)
            return own - len(self.pad) if padded else own
        if not decided or st.partial and cut < 0:
            # The text from cut on may still become a stop, or the input ended in the value:
            # what is certain ends before the tail that may still begin a marker (a stream
            # waits here at every chunk that holds a `<`).
            safe = self._certain_end(text, pos, cut if not decided else st.n)
            return st.need(self, safe, safe)
        return value_end(text, pos, st.n if cut < 0 else cut, self.stops.mismatched)

    def tail_pattern(self) -> str | None:
        """A regex matching, where it matches, as a whole parse does (LeadPattern's tail): a
        text without the one lead character up to the closing tag, which begins with it, the
        padding before the tag left out as match leaves it (None: other leads)."""
        lead, end, pad = self.lead, self.end, self.pad
        if not lead or not end.startswith(lead) or lead in pad:
            return None
        body = f"[^{re.escape(lead)}]"
        if not pad:
            return f"{body}*+(?={re.escape(end)})"
        return f"{body}*?(?=(?:{re.escape(pad)})?{re.escape(end)})"  # the first stop is own

    def _intruder(self, st: MatchState, pos: int, limit: int) -> tuple[int, bool]:
        """Return where the first stop before limit is (-1: none), and whether that is
        decided (partial input may end where a marker is a stop or not, by what follows)."""
        if not self._has_lead(st.text, pos, limit):
            return -1, True
        for found in self.stops.pattern.finditer(st.text, pos, limit):
            if found.group() in self.stops.openings:
                return found.start(), True
            after = found.end()
            while after < st.n and st.text[after] in SPACE:
                after += 1
            if st.partial and self._may_begin_stop(st.text[after:]):
                return found.start(), False
            if (after == st.n or self.stops.pattern.match(st.text, after)
                    or st.text.startswith(self.end, after)):
                return found.start(), True
        return -1, True

    def _may_begin_stop(self, rest: str) -> bool:
        """Tell whether partial input ends inside what may still become a stop (or the end)."""
        return not rest.strip(SPACE) or rest in self.stop_openers

    def _certain_end(self, text: str, pos: int, upto: int) -> int:
        """Return where the certain text of a value read from pos to upto ends: before the
        tail that may still become a marker and the whitespace left for the closing."""
        window = upto - self.reach  # not max(): a builtin call costs as much as the search
        if window < pos:
            window = pos
        lead = self.lead
        if (lead in text[window:upto] if lead  # _has_lead's usual case inlined; `in` on a
                else self._has_lead(text, window, upto)):  # slice, cheaper than find's parsing
            held = self.held.search(text, window, upto)  # the earliest tail: the longest
            if held is not None:
                upto = held.start()
        end = pos + len(text[pos:upto].rstrip(SPACE))  # value_end's, before its tags
        mismatched = self.stops.mismatched
        return value_end(text, pos, end, mismatched) if mismatched else end

    def _has_lead(self, text: str, start: int, end: int) -> bool:
        """Tell whether a stop, a tag or the closing may begin in text[start:end] (the fast
        answer for the usual value: no `<` in it)."""
        leads = self.leads
        if len(leads) == 1:
            return text.find(leads, start, end) >= 0
        return any(text.find(lead, start, end) >= 0 for lead in leads)

    def waiting_end(self, text: str, at: int) -> int:
        # No stop, tag or closing can begin in text without their leads: it reads on to the
        # end of text, short of the trailing whitespace left for the closing (as match waits).
        rest = text[at:] if at else text
        if self.end in rest:  # a run decides (most chunks that ask: a stream answers the rest)
            return -1
        if self.lead not in rest if self.lead else not self._has_lead(rest, 0, len(rest)):
            return at + len(rest.rstrip(SPACE))
        if self.stops.pattern.search(rest):  # a whole stop: a run decides too
            return -1
        # All of it may still begin a marker (the closing tag coming, one character at a
        # time): held where it was.
        if rest in self.openers:
            return at
        # Else the match waits as match does: before the tail that may still begin a
        # marker (a chunk that ends in `\n</para`).
        return at + self._certain_end(rest, 0, len(rest))

    def may_fail(self, text: str, pos: int) -> bool:
        return False  # any text is a value: more input only moves where it ends

    def describe(self) -> str:
        return f"value-text({self.end!r})"


@lru_cache(maxsize=256)
def beginnings(markers: tuple[str, ...], proper: bool) -> frozenset[str]:
    """Return every beginning of the markers (shorter than the marker when proper)."""
    return frozenset(m[:size] for m in markers for size in range(len(m) + (not proper)))


def value_end(text: str, pos: int, cut: int, mismatched: tuple[str, ...]) -> int:
    """Return where the value ends before cut: trailing whitespace and one closing tag of
    another element are left for the closing."""
    end = pos + len(text[pos:cut].rstrip(SPACE))  # one call, not a step per character
    for tag in mismatched:
        if text.endswith(tag, pos, end):
            return value_end(text, pos, end - len(tag), ())
    return end


def tolerant_closing(end: str, closing: p.Expr, stops: Intruders) -> p.Expr:
    """Match the value's closing tag; or another element's, or none, each a deviation."""
    wanted = f"`{end}`"
    alternatives = [closing]
    if stops.mismatched:
        tag = p.space() + p.literals(stops.mismatched)
        alternatives.append(p.noted(tag, "mismatched_close", "accepted", wanted))
    alternatives.append(p.noted(p.eps(), "missing_close", "accepted", wanted))
    return p.choice(*alternatives)
