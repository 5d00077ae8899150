"""A stream that skips runs (`Expr.waiting_end`, analyzer/parsing/stream.py) must give exactly the
deltas and deviations of one that runs the grammar on every chunk, for every template's own
rendering of a call, cut into chunks of several sizes, clean and with a closing left out."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import (
    generated_call_or_skip,
    streamed,
    template_paths,
    with_text_and_cut,
)
from skipping_streams import AlwaysRuns, CountsSkips

from analyzer.parsing.stream import accumulate

SIZES = (1, 2, 3, 7, 16)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_skipping_streams_equal_running_streams_on_rendered_calls(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    skipped = 0
    for number, output in enumerate(with_text_and_cut(rendering)):
        report = parser.parse_report(output)
        for size in SIZES:
            chunks = [output[at : at + size] for at in range(0, len(output), size)]
            fast, slow = CountsSkips(parser.parser), AlwaysRuns(parser.parser)
            fast_deltas = streamed(fast, parser.prompt.tail, chunks)
            assert fast_deltas == streamed(slow, parser.prompt.tail, chunks), (size, output)
            assert fast.deviations == slow.deviations, (size, output)
            if number < 2:  # whole renderings (a cut one may read otherwise in one shot)
                assert accumulate(fast_deltas) == report.message, (size, output)
            skipped += fast.skipped
    assert skipped > 0, "some chunk of some rendering needs no run"
