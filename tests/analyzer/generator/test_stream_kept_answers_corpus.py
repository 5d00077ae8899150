"""A stream keeps two kinds of answers between runs (analyzer/parsing/stream.py): what a run's
last leaf can tell (`leaf_kind`, by leaf) and the whole skip test of a run that stops at a
resume point's head (`_steady`, by resume point and leaf). Each feed's deltas and deviations,
and the message, must equal a stream that forgets both before every chunk, for every
template's own rendering of a call and for mutations of it, in chunks of several sizes; and
what is kept stays bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rendered_calls import ARGUMENTS, generated_call_or_skip, template_paths

from analyzer.parsing.stream import HEADS_KEPT, Delta, StreamParser

SIZES = (1, 4, 16)


class Forgets(StreamParser):
    """A stream that asks every leaf and every resume point again at every chunk."""

    def feed(self, chunk: str) -> list[Delta]:
        self.heads.clear()
        self.kinds.clear()
        return super().feed(chunk)


def mutations(output: str) -> list[str]:
    """The rendering, the rendering twice (a second call meets the resume points and leaves
    of the first), and versions with an argument name cut short or unknown (the stream then
    stops at other leaves and resume points)."""
    found = [output, output + output]
    for name in ARGUMENTS:
        if name in output:
            found += [output.replace(name, name[:-1], 1), output.replace(name, "x" + name, 1)]
    return found


def per_chunk(stream: StreamParser, tail: str, chunks: list[str]) -> list[Any]:
    """Each feed's deltas and the deviations known after it, then finish's."""
    return [(stream.feed(chunk), stream.deviations) for chunk in ([tail] if tail else [])
            + chunks] + [(stream.finish(), stream.deviations)]


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_kept_answers_give_the_deltas_of_answers_asked_again(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    tail = parser.prompt.tail
    for output in mutations(rendering):
        for size in SIZES:
            chunks = [output[at : at + size] for at in range(0, len(output), size)]
            keeps, forgets = StreamParser(parser.parser), Forgets(parser.parser)
            assert per_chunk(keeps, tail, chunks) == per_chunk(forgets, tail, chunks), (chunks,)
            assert keeps.message() == forgets.message(), (chunks,)
            assert len(keeps.heads) <= HEADS_KEPT and len(keeps.kinds) <= HEADS_KEPT
