"""A stream that skips runs (analyzer/parsing/stream.py) must give, chunk by chunk, the deltas
and deviations of one that runs the grammar on every chunk, and the same message, for every
template's own rendering of a call and for mutations of it (an argument name cut short,
lengthened or unknown, which a choice between the declared and an undeclared argument tells
apart only late; a closing left out), cut into chunks of several sizes and at random."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from rendered_calls import ARGUMENTS, generated_call_or_skip, template_paths
from skipping_streams import AlwaysRuns, CountsSkips

from analyzer.parsing.stream import StreamParser

SIZES = (1, 3, 5, 16)
RANDOM_CUTS = 3


def mutations(output: str) -> list[str]:
    """The rendering, versions whose argument names depart from the schema, and one cut
    before its last closing."""
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
    """Chunkings of output: fixed sizes, then random sizes from 1 to 12 (seeded)."""
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


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_skipping_streams_equal_running_streams_chunk_by_chunk(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    tail = parser.prompt.tail
    skipped = 0
    for number, output in enumerate(mutations(rendering)):
        for chunks in cuts(output, number):
            fast, slow = CountsSkips(parser.parser), AlwaysRuns(parser.parser)
            assert per_chunk(fast, tail, chunks) == per_chunk(slow, tail, chunks), (chunks,)
            assert fast.message() == slow.message(), (chunks,)
            skipped += fast.skipped
    assert skipped > 0, "some chunk of some output needs no run"
