"""A break right after a call's name, in every template's rendering of a call: the markup that
follows the name begins as the template writes it, then departs (`[CALL_I` then text, for
`[CALL_ID]`). A stream whose chunk ended inside that beginning has already made the name
final and sent it; the one-shot parse must keep it too, so that every chunking sends the
one-shot message's calls and notes the break with the same kind and action.

Without recovery.farthest_certain, the one-shot parse dropped such a call (its name was not
final in the text before the break) while streams cut inside the marker kept it. Without
recovery keeping as content the text before a break that nothing made final (a call head left
unfinished, Kimi-K3's), that text was in neither the content nor a call one-shot, while a
stream could re-read it as content."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import generated_call_or_skip, template_paths

from analyzer.parsing.stream import accumulate

NAME = "search_records"
DEPARTURE = "\x01"  # no template writes it: where it stands, the markup departs


def departures(rendering: str) -> list[str]:
    """The rendering with the markup after the call's name kept for 1 to 3 characters, then
    departing (the rest of the rendering follows as it was)."""
    at = rendering.find(NAME)
    if at < 0:
        return []
    after = at + len(NAME)
    return [rendering[:after + kept] + DEPARTURE + rendering[after + kept:]
            for kept in (1, 2, 3) if after + kept < len(rendering)]


def summary(deviations: tuple) -> list[tuple]:
    """What a break's notes must agree on: kind, action and offset (what each side
    expected may differ with where its failing run began)."""
    return [(d.kind, d.action, d.offset) for d in deviations]


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_break_after_the_name_gives_every_chunking_the_one_shot_message(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    outputs = departures(rendering)
    if not outputs:
        pytest.skip("the rendering does not write the call's name")
    for output in outputs:
        report = parser.parse_report(output)
        for split in range(1, len(output)):
            stream = parser.stream()  # it reads the generation prompt's tail first
            deltas = stream.feed(output[:split]) + stream.feed(output[split:]) + stream.finish()
            assert accumulate(deltas) == report.message, (split, output)
            assert summary(stream.deviations) == summary(report.deviations), (split, output)
