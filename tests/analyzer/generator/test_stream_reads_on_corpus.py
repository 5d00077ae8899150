"""Streams that read on inside values without running the grammar (a JSON value scanned on
from its state, `JsonContinue.read_on`; a run held back by a choice that stays held,
`MatchState.shaky`) must give exactly the deltas and deviations of a stream that runs the
grammar on every chunk: on every template's rendering of a call whose argument value is
edited as models and transports break it (escapes, stray quotes and brackets, a CDATA
section left open, truncations, a wrong function name)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import (
    ARGUMENTS,
    generated_call,
    streamed,
    template_paths,
)
from skipping_streams import AlwaysRuns, CountsSkips

SIZES = (1, 3, 16)
VALUE = ARGUMENTS["query"]  # "hotels", somewhere in every rendering of the call
# What the value becomes: valid JSON escapes, then each way of breaking a JSON string or a
# tagged value a model may write.
EDITS = (
    'ho\\"t\\n\\u00e9l \\\\ [1, {2: 3}]s',
    'ho"tels',
    "ho\\qtels",
    "ho\\u12tels",
    "ho}]tels",
    "ho]]>tels</",
    "<![CDATA[ho]t<el>s]]>",
    "<![CDATA[hotels",
)



def edited(output: str) -> list[str]:
    """The rendering with its value edited, cut inside and after the value, and with the
    function's name misspelt."""
    at = output.index(VALUE)
    after = at + len(VALUE)
    found = [output[:at] + edit + output[after:] for edit in EDITS]
    found += [output[: at + 3], output[: after + 1], output[:after] + output[after + 1 :]]
    found.append(output.replace("search_records", "search_recordz"))
    if f'"{VALUE}"' in output:  # a JSON string value: a number in its place
        found.append(output.replace(f'"{VALUE}"', "12.5e3", 1))
    return found



@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_streams_reading_on_equal_running_streams_on_edited_values(path: Path) -> None:
    found = generated_call(path)
    if found is None or VALUE not in found[1]:
        pytest.skip("no generated parser, or the template cannot render the call")
    parser, rendering = found
    for output in edited(rendering):
        for size in SIZES:
            chunks = [output[at : at + size] for at in range(0, len(output), size)]
            fast, slow = CountsSkips(parser.parser), AlwaysRuns(parser.parser)
            fast_deltas = streamed(fast, parser.prompt.tail, chunks)
            assert fast_deltas == streamed(slow, parser.prompt.tail, chunks), (size, output)
            assert fast.deviations == slow.deviations, (size, output)
