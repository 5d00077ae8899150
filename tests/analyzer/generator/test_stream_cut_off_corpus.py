"""A finished output cut off anywhere after a call's name, in every template's rendering of a
call: a stream (the output split in two, the stream then finished) gives the one-shot message
(content and calls) and notes the same deviations (kind, action and offset).

At the very end of a finished output a break is read as the output cut off there
(`MatchState.ended`: a number is whole, a regex that waits for more text decides); a
stream reads it so at its finish, from where it resumed. A regex that fails read whole is
read as any partial text (recovery.ended_run): Kimi-K3's `index="` cut before its digits
broke twice in streams, once one-shot, when the failing reading moved the break back."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import generated_call_or_skip, template_paths

from analyzer.parsing.stream import accumulate

NAME = "search_records"


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_finished_output_cut_off_in_a_call_streams_as_one_shot(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    at = rendering.find(NAME)
    if at < 0:
        pytest.skip("the rendering does not write the call's name")
    for cut in range(at + 1, len(rendering)):
        output = rendering[:cut]
        report = parser.parse_report(output)
        deviations = [(d.kind, d.action, d.offset) for d in report.deviations]
        for split in {1, cut // 2, cut - 1}:
            stream = parser.stream()
            deltas = stream.feed(output[:split]) + stream.feed(output[split:]) + stream.finish()
            assert accumulate(deltas) == report.message, (split, output)
            assert [(d.kind, d.action, d.offset) for d in stream.deviations] == deviations, (
                split, output)
