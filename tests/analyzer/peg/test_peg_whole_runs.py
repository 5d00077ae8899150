"""Whole runs that record no failures take shortcuts a trace and a stream never take: a
sequence's rules matched as their bodies, text up to markers captured in one step, items that
cannot start where they stand skipped (a kept marker answers as the capture it wraps). Each
must end and record events as the traced run does, and as a stream does once finished."""

from __future__ import annotations

import pytest

from analyzer import peg as p
from analyzer.parsing.mapper import to_message
from analyzer.parsing.stream import StreamParser, accumulate
from analyzer.peg import Role
from analyzer.peg.captures import UntilCapture
from analyzer.peg.expressions import Rule, RuledSequence
from analyzer.peg.state import FAIL, Event, MatchState

INPUTS = ("", "ab", "ab c", "ab  \n c", "abc", "a", "xab c", "ab c<m>rest", "<m>", "ab <m>")


def outcome(expr: p.Expr, text: str, traced: bool) -> tuple[int, list[Event]]:
    st = MatchState(text, partial=False, traced=traced)
    end = expr.match(st, 0)
    return end, (st.events if end != FAIL else [])


def grammar() -> p.Expr:
    """Rules nested in sequences, whitespace twice in a row, content up to a marker."""
    word = p.rule("word", p.literal("a") + p.rule("b", p.literal("b")))
    text = p.rule("text", p.content(p.until("<m>")))
    return p.sequence(word, p.space(), p.space(), p.optional(p.literal("c")), text,
                      p.optional(p.literal("<m>") + text))


def test_a_sequence_holding_rules_matches_their_bodies_as_its_items() -> None:
    start = grammar()
    assert type(start) is RuledSequence
    outcome(start, "ab c", traced=False)
    assert start.flat is not None
    flat = [item for item, _ in start.flat]
    assert not any(type(item) is Rule for item in flat)
    # The second whitespace went with the first (it never matches more).
    assert sum(item.is_space for item in flat) < sum(item.is_space for item in start.items)
    # At the end of the input the whitespace and the optional items match nothing: they are
    # skipped there (`a`, `b` and the content capture run).
    assert [item.describe() for item in flat] == [
        '"a"', '"b"', "space", '"c"?', 'content<until("<m>")>', '("<m>" text)?']
    assert [idle for _, idle in start.flat] == [False, False, True, True, False, True]


@pytest.mark.parametrize("text", INPUTS)
def test_whole_runs_of_rules_end_and_record_as_traced_runs(text: str) -> None:
    start = grammar()
    assert outcome(start, text, traced=False) == outcome(start, text, traced=True)


@pytest.mark.parametrize("text", INPUTS)
def test_content_up_to_markers_is_captured_as_traces_and_streams_capture_it(text: str) -> None:
    capture = p.content(p.until("<m>", "</m>"))
    assert type(capture) is UntilCapture
    parser = p.Parser(capture + p.zero_or_more(p.literal("<m>") + capture))
    whole = parser.parse(text)
    assert outcome(parser.start, text, traced=True) == (len(text), list(whole.events))
    stream = StreamParser(parser)
    deltas = [delta for at in range(0, len(text), 3) for delta in stream.feed(text[at:at + 3])]
    assert accumulate(deltas + stream.finish()) == to_message(whole)


def test_a_kept_marker_starts_and_ends_as_the_capture_it_keeps() -> None:
    kept = p.kept_as_text(p.content(p.literal("<call>")), p.literal("<call>") + p.literal("f"))
    assert kept.opening_chars() == frozenset("<")
    assert not kept.matches_at_end()
    assert kept.never_commits()
    loop = p.zero_or_more(kept + p.content(p.until("<call>")))
    text = "<call>g and <call>"
    assert outcome(loop, text, traced=False) == outcome(loop, text, traced=True)
    assert [event[0] for event in outcome(loop, text, traced=False)[1]] == [
        Role.PROBLEM, Role.CONTENT, Role.CONTENT, Role.PROBLEM, Role.CONTENT, Role.CONTENT]
