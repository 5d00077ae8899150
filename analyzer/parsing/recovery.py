"""Recovery: one broken part never fails the whole message.

Where the grammar cannot go on (a call's JSON breaks off, a marker the call needs is not
there), the parse does what a stream would have done up to that point: it keeps everything
certain before the break (the calls before it, the broken call with the arguments read so
far), closes the broken call (its arguments healed into a JSON object), notes a
`malformed_call` deviation at the break, and reads the text from the break on as a new
output (content, later calls). One-shot parses and streams break at the same place and keep
the same events, so a stream still adds up to the one-shot message: what is certain is what
the longest prefix that still reads makes final (a stream's chunk may have ended there), and
text of the output before the break that nothing made final (markup not finished, such as a
call's head, or a member the call would have dropped) is kept as content, as a stream that
re-reads it keeps it. The generation prompt's tail, which the parser reads first, is never
part of it: it is the prompt's, not the output's.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.peg import Expr, Note, PegParseError, Role, run
from analyzer.peg.diagnostics import moved
from analyzer.peg.parser import Run
from analyzer.peg.roles import PARTIAL
from analyzer.peg.state import Event

# TOOL_CLOSE info of a break: close the open call, if any, healing its arguments.
BROKEN = "broken"


@dataclass(frozen=True)
class Break:
    """A place where the grammar could not go on: final events before it, then the break."""

    cut: int  # where the text is read again as a new output (positions in the run's text)
    events: list[Event]


def broken_at(expr: Expr, text: str, error: PegParseError, origin: tuple[int, int, int],
              memo: dict[object, object] | None = None, before: list[Event] | None = None,
              output_start: int = 0, final: bool = False) -> Break:
    """Return what a parse of text by expr keeps before the error, and the break events.

    before: the events already applied (a stream's); a call broken before its name is
    dropped, not returned. output_start: where the output begins in text (the generation
    prompt's tail comes before it). final: text is the end of a finished output (a one-shot
    parse of a whole output, a stream's finish): a break at its very end is read as the
    output cut off there (`MatchState.ended`), so what was begun is kept."""
    cut = min(max(error.offset - origin[0], 0), len(text))
    events: list[Event] = []
    final_end = 0
    while cut > 0:
        try:
            found = ended_run(expr, text, origin, memo) if final and cut == len(text) else None
            if found is None:
                found = run(expr, text[:cut], 0, True, origin, dict(memo or {}))
        except PegParseError as earlier:  # the fatal failure came before the farthest one
            cut = min(max(earlier.offset - origin[0], 0), cut - 1)
            continue
        events, final_end = farthest_certain(found, text, cut, origin)
        break
    action = "dropped" if unnamed_call_open([*(before or []), *events]) else "kept_as_content"
    note = Note("malformed_call", action, " or ".join(error.expected) or "a call")
    ending = [(Role.TOOL_CLOSE, cut, cut, 0, BROKEN), (Role.DEVIATION, cut, cut, 0, note)]
    unfinished = max(final_end, output_start)
    if action == "kept_as_content" and unfinished < cut:
        # Output read before the break that nothing made final: kept as content, as a
        # stream that re-reads it from there keeps it.
        ending.insert(1, (Role.CONTENT, unfinished, cut, 0, None))
    return Break(cut, [*events, *ending])


def ended_run(expr: Expr, text: str, origin: tuple[int, int, int],
              memo: dict[object, object] | None) -> Run | None:
    """Return the partial run of a finished output's text that reads it as cut off where it
    ends (`MatchState.ended`), or None where that reading fails (a token the end cut short
    that fails read whole: the text is read as any partial one).

    Nothing more comes: a number at the end is whole, and a leaf that waits for more text
    (a separator's regex before the next call) decides, so a call begun there is read and
    kept, one-shot and at a stream's finish alike."""
    try:
        return run(expr, text, 0, True, origin, dict(memo or {}), ended=True)
    except PegParseError:
        return None


# How far past a break a parse looks for text a stream could have read as the beginning of a
# marker cut short (the longest marker is far shorter).
MARKER_REACH = 64


def farthest_certain(found: Run, text: str, cut: int, origin: tuple[int, int, int]
                     ) -> tuple[list[Event], int]:
    """Return the final events, and where the text they make final ends (at most cut), of
    the longest prefix of text (up to MARKER_REACH past cut) that a partial parse still
    reads: the break's text may begin like a marker (`[CALL_I` for `[CALL_ID]`). found is
    the partial run over text[:cut].

    A stream whose chunk ended inside that prefix made those events final, and sent them
    (a call's name, decided by the marker's first character), before the text that breaks
    arrived; a one-shot parse keeps the same, so every chunking sends the one-shot calls.
    Each longer prefix is read on from found's resume point, as a stream reads its next
    chunk; a prefix of a prefix that reads reads too, so the longest is found by bisection."""
    events = found.final_events()
    if not found.needs_more:
        return events, cut
    state = found.state
    resume, at, memo = state.resume, state.resume_pos, state.memo
    best, end = events, at
    low, high = cut, min(len(text), cut + MARKER_REACH)
    while low < high:
        middle = (low + high + 1) // 2
        try:
            more = run(resume, text[at:middle], 0, True, (origin[0] + at, 1, 1),
                       dict(memo or {}))
        except PegParseError:
            high = middle - 1
            continue
        low, best = middle, events + shift(more.final_events(), at)
        end = at + more.state.resume_pos if more.needs_more else middle
    return best, min(end, cut)


def unnamed_call_open(events: list[Event]) -> bool:
    """Tell whether the events leave a call open that has no name yet."""
    for role, _, _, flags, _ in reversed(events):
        if role is Role.TOOL_NAME and not flags & PARTIAL:
            return False
        if role is Role.TOOL_OPEN:
            return True
        if role is Role.TOOL_CLOSE:
            return False
    return False


def shift(events: list[Event], by: int) -> list[Event]:
    """Return events of a text read `by` characters into a longer one."""
    if by == 0:
        return events
    return [moved(event, by) if event[0] is Role.PROBLEM
            else (event[0], event[1] + by, event[2] + by, event[3], event[4])
            for event in events]


def recovered_events(start: Expr, text: str, partial: bool, output_start: int = 0
                     ) -> tuple[list[Event], bool]:
    """Parse text from start, recovering at each break; return the events and whether the
    grammar reached its end (False: partial input stopped mid-way). output_start: where the
    output begins in text (after the generation prompt's tail)."""
    events: list[Event] = []
    pos, broke = 0, -1
    while True:
        try:
            result = run(start, text[pos:], 0, partial)
        except PegParseError as error:
            found = broken_at(start, text[pos:], error, (0, 1, 1), before=events,
                              output_start=output_start - pos,
                              final=not partial)
            if found.cut == 0:
                kept = found.events if broke != pos else []  # one note per place
                return events + shift(kept, pos) + rest_as_content(text, pos), True
            events += shift(found.events, pos)
            pos = broke = pos + found.cut
            continue
        return events + shift(result.certain_events(), pos), not result.needs_more


def rest_as_content(text: str, pos: int) -> list[Event]:
    """Keep the text from pos as content (the grammar cannot even start there)."""
    return [(Role.CONTENT, pos, len(text), 0, None)] if pos < len(text) else []
