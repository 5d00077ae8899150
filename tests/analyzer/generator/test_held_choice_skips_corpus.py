"""A stream skips the runs of a held choice whose held text passed some leads
(`Choice.waiting_end`, `Expr.outcome_on`): each chunk must give the deltas a stream that runs
the grammar on every chunk gives, with the same deviations and message, for every template's
own rendering of a call and for mutations of it (an argument name cut short, lengthened, or
unknown; a closing left out), cut into chunks of several sizes and at random."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from rendered_calls import ARGUMENTS, generated_call, template_paths
from skipping_streams import AlwaysRuns, CountsSkips

from analyzer.parsing.stream import Delta, StreamParser
from analyzer.peg import Expr
from analyzer.peg.expressions import QUIET, UNDECIDED, WAITS, Choice
from analyzer.peg.state import FAIL, NEED, MatchState

SIZES = (1, 3, 5, 16)
RANDOM_CUTS = 3


def mutations(output: str) -> list[str]:
    """The rendering, then versions whose argument names depart from the schema (a name the
    held choice must tell from the declared one only late) and one cut before its closing."""
    found = [output]
    for name in ARGUMENTS:
        if name in output:
            found += [output.replace(name, name[:-1], 1), output.replace(name, name + "s", 1),
                      output.replace(name, "x" + name, 1)]
    at = output.rfind("</")
    if at > 0:
        found.append(output[:at])
    return found


def cuts(output: str, seed: int) -> list[list[str]]:
    """Chunkings of output: fixed sizes, then random sizes from 1 to 12."""
    chunkings = [[output[at : at + size] for at in range(0, len(output), size)]
                 for size in SIZES]
    draw = random.Random(seed)
    for _ in range(RANDOM_CUTS):
        chunks, at = [], 0
        while at < len(output):
            size = draw.randint(1, 12)
            chunks.append(output[at : at + size])
            at += size
        chunkings.append(chunks)
    return chunkings


def per_chunk(stream: StreamParser, tail: str, chunks: list[str]) -> list[Any]:
    """Each feed's deltas and the deviations known after it (the tail's first), then
    finish's."""
    return [(stream.feed(chunk), stream.deviations) for chunk in ([tail] if tail else [])
            + chunks] + [(stream.finish(), stream.deviations)]


class CountsHeldSkips(CountsSkips):
    """Counts the chunks skipped while a held choice waits past the shortest of its leads:
    the skips only `Expr.outcome_on` allows."""

    held_skips = 0

    def feed(self, chunk: str) -> list[Delta]:
        quiet, runs = self.quiet, self.runs
        deltas = super().feed(chunk)
        if (self.runs == runs and quiet is not None and isinstance(quiet.leaf, Choice)
                and len(self.buffer) - quiet.at >= quiet.leaf.shortest):
            self.held_skips += 1
        return deltas


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_held_choice_skips_equal_running_streams(path: Path) -> None:
    found = generated_call(path)
    if found is None:
        pytest.skip("no generated parser, or the template cannot render the call")
    parser, rendering = found
    tail = parser.prompt.tail
    for number, output in enumerate(mutations(rendering)):
        for chunks in cuts(output, number):
            fast, slow = CountsHeldSkips(parser.parser), AlwaysRuns(parser.parser)
            assert per_chunk(fast, tail, chunks) == per_chunk(slow, tail, chunks), (chunks,)
            assert fast.deviations == slow.deviations, (chunks,)
            assert fast.message() == slow.message(), (chunks,)


def test_held_choices_skip_in_tagged_renders() -> None:
    """Some template's rendering streams through held-choice skips (else the test above
    checks nothing new)."""
    held = 0
    for path in template_paths():
        found = generated_call(path)
        if found is None:
            continue
        parser, rendering = found
        for output in mutations(rendering):
            stream = CountsHeldSkips(parser.parser)
            per_chunk(stream, parser.prompt.tail, list(output))
            held += stream.held_skips
        if held:
            return
    pytest.fail("no held choice waited past its shortest lead without a run")


def expressions(start: Expr) -> list[Expr]:
    """Every expression the grammar reaches from start (rules' bodies included), once."""
    seen: dict[int, Expr] = {}
    todo = [start]
    while todo:
        expr = todo.pop()
        if id(expr) in seen:
            continue
        seen[id(expr)] = expr
        todo += expr.children()
    return list(seen.values())


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_outcomes_told_are_the_outcomes_of_runs(path: Path) -> None:
    """What `Expr.outcome_on` tells of a text, a partial run on it does: NEED or FAIL with no
    commit, and nothing final when it is QUIET (on every piece of the renderings and their
    mutations that starts at a marker's first character)."""
    found = generated_call(path)
    if found is None:
        pytest.skip("no generated parser, or the template cannot render the call")
    parser, rendering = found
    told = 0
    pieces = {output[start:end] for output in mutations(rendering)
              for start in range(len(output)) if output[start] in "<[{|\n"
              for end in range(start, min(len(output), start + 40) + 1)}
    for expr in expressions(parser.parser.start):
        for piece in pieces:
            outcome = expr.outcome_on(piece)
            if outcome == UNDECIDED:
                continue
            told += 1
            st = MatchState(piece, partial=True, traced=False)  # as a stream runs
            end = expr.match(st, 0)
            assert (end, st.commits) == ((NEED if outcome >= WAITS else FAIL), 0), (expr, piece)
            if outcome == QUIET:  # and nothing it recorded is final
                assert st.commit_events == 0, (expr, piece)
    assert told, "no expression told an outcome"
