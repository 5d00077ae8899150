"""A held choice decided without running its alternatives (Choice.open_leads, a later
alternative that matches anywhere or whose waiting_form says it waits, Closing.held_on_marker,
DispatchOrElse.near_end) leaves, at every cut of every corpus template's rendering and of
its mutations, exactly the state the plain path leaves: the choice asking each alternative
(session 8's code, kept here as the reference). Streams in several chunkings give the same
deltas, deviations and message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from rendered_calls import (
    expressions_in,
    generated_call,
    generated_call_or_skip,
    template_paths,
    with_text_and_cut,
)
from test_stream_decided_leads import GRAMMAR_OBJECTS, state_after
from test_stream_skips_per_chunk_corpus import cuts, mutations, per_chunk

from analyzer.generator.build import Closing, DispatchOrElse
from analyzer.generator.tools_tagged import UndeclaredArgument
from analyzer.parsing.stream import StreamParser
from analyzer.peg import Expr
from analyzer.peg.expressions import Choice, _may_match, forget_resume_points, waits_on
from analyzer.peg.state import FAIL, NEED, UNTRACED, MatchState

# --- the plain path: every alternative a held choice keeps is asked by running it ---------


def all_open(choice: Choice, rest: str, order: tuple[int, ...]) -> bool:
    """Tell whether rest is shorter than, and begins, the prefix of every alternative in
    order."""
    assert choice.leads is not None
    return all(len(rest) < size and lead.startswith(rest)
               for _, lead, _, size in (choice.leads[index] for index in order))


def plain_match(self: Choice, st: MatchState, pos: int) -> int:
    """Choice.match as session 8 wrote it (the all-open test by each alternative's prefix)."""
    leads = self.leads or self._compute_leads()
    text = st.text
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
    if (st.partial and st.n - pos < self.shortest and order
            and all_open(self, text[pos:], order)):
        st.need(self, pos, pos)
        st.unsafe_from = min(st.unsafe_from, events_at_start)
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


def plain_waiting_end(self: Choice, text: str, at: int) -> int:
    rest = text[at:]
    if self.leads is None or len(rest) >= self.shortest:
        return -1
    order = self.by_char.get(rest[0], self.unled) if rest else self.everything
    return at if order and all_open(self, rest, order) else -1


def plain_hold(self: Choice, st: MatchState, pos: int, index: int, events: int) -> None:
    """Choice.hold_unless_decided as session 8 wrote it (every later alternative run)."""
    text, left = st.text, st.n - pos
    later = []
    for at, alt, lead, size, *_ in self.later[index]:
        if not lead or text.startswith(lead, pos):
            if _may_match(alt, st, pos):
                later.append(at)
        elif st.partial and left < size and lead.startswith(text[pos:]):
            later.append(at)
            st.shaky = True
    if later and index == 0 and len(later) == len(self.alternatives) - 1:
        st.hold_back(self, pos, events)
    elif later:
        kept_ones = (index, *later)
        narrowed = self.narrowed.get(kept_ones)
        if narrowed is None:
            narrowed = self.narrowed[kept_ones] = Choice(
                tuple(self.alternatives[at] for at in kept_ones))
        st.hold_back(narrowed, pos, events)


@contextmanager
def plain_paths(start: Expr, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within: held choices of this grammar run their alternatives (the plain path)."""
    closings = [expr for expr in expressions_in(start) if isinstance(expr, Closing)]
    dispatches = [expr for expr in expressions_in(start) if isinstance(expr, DispatchOrElse)]
    kept = [closing.waiting for closing in closings], [d.near_end for d in dispatches]
    with monkeypatch.context() as patched:
        patched.setattr(Choice, "match", plain_match)
        patched.setattr(Choice, "waiting_end", plain_waiting_end)
        patched.setattr(Choice, "hold_unless_decided", plain_hold)
        for closing in closings:
            closing.waiting = None
        for dispatch in dispatches:
            dispatch.near_end = None
        try:
            yield
        finally:
            for closing, waiting in zip(closings, kept[0], strict=True):
                closing.waiting = waiting
            for dispatch, near_end in zip(dispatches, kept[1], strict=True):
                dispatch.near_end = near_end


def both_states(start: Expr, text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The state a partial run over text leaves, held choices decided and plain."""
    forget_resume_points()
    fast = state_after(start, text)
    forget_resume_points()
    with plain_paths(start, monkeypatch):
        plain = state_after(start, text)
    return fast, plain


def outputs(rendering: str) -> list[str]:
    """The rendering with text before it and cut, and its argument names departing."""
    return list(dict.fromkeys(with_text_and_cut(rendering) + mutations(rendering)))


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_every_cut_leaves_the_plain_paths_state(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    start = parser.parser.start
    GRAMMAR_OBJECTS.clear()
    GRAMMAR_OBJECTS.update(expressions_in(start))
    for output in outputs(rendering):
        text = parser.prompt.tail + output
        for cut in range(len(text) + 1):
            fast, plain = both_states(start, text[:cut], monkeypatch)
            assert fast == plain, (cut, text[:cut])


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_streams_give_the_plain_paths_deltas(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    tail = parser.prompt.tail
    for number, output in enumerate(outputs(rendering)):
        for chunks in cuts(output, number):
            fast_stream = StreamParser(parser.parser)
            fast = per_chunk(fast_stream, tail, chunks)
            with plain_paths(parser.parser.start, monkeypatch):
                plain_stream = StreamParser(parser.parser)
                plain = per_chunk(plain_stream, tail, chunks)
                plain_message = plain_stream.message()
            assert fast == plain, chunks
            assert fast_stream.message() == plain_message, chunks


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_an_undeclared_argument_waits_exactly_where_its_waiting_form_says(path: Path) -> None:
    found = generated_call(path)
    if found is None:
        pytest.skip("no generated parser, or the template cannot render the call")
    undeclared = [expr for expr in expressions_in(found[0].parser.start)
                  if isinstance(expr, UndeclaredArgument)]
    if not undeclared:
        pytest.skip("no undeclared argument")
    for argument in undeclared:
        form = waits_on(argument)
        assert form is not None
        opening = argument.opening
        inside = {opening[:cut] for cut in range(len(opening))} | {
            opening + "ci.ty-2"[:cut] for cut in range(8)}  # where it surely waits
        past = {opening + tail for tail in ("city x", "city>\nParis", "=", " ", "ci>ty")}
        for text in inside | past:
            st = MatchState("<" + text, partial=True, traced=False)
            said = form.fullmatch(st.text, 1) is not None
            assert said == (text in inside), text
            assert not said or argument.match(st, 1) == NEED, text  # it waits where said
