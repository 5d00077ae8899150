"""A whole parse skips expressions that cannot match where it stands (`Expr.opening_chars`,
`matches_at_end`: peg/expressions.py). It must end, and record events, exactly as the general
path (a run that records failures for a trace, which skips nothing) on every template's own
rendering of a call and on that rendering broken: cut, with characters inserted or deleted,
with a wrong function name, with broken JSON."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import generated_call_or_skip, template_paths, whole_outcome


def broken(output: str) -> list[str]:
    """The rendering, and the rendering departed from in the ways models depart from it."""
    found = [output, "Let me look that up.\n\n" + output, output + "\n", output + " trailing"]
    steps = range(0, len(output), max(1, len(output) // 12))
    found += [output[:at] for at in steps]
    found += [output[:at] + "x" + output[at:] for at in steps]
    found += [output[:at] + output[at + 1 :] for at in steps]
    found += [output.replace("search_records", "search_recordz"),
              output.replace('"query"', '"query'), output.replace(":", "", 1),
              output.replace("{", "[", 1), output.replace("}", "", 1), output + output]
    return found



@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_whole_parses_that_skip_equal_the_general_path(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    for output in broken(rendering):
        text = parser.prompt.tail + output
        start = parser.parser.start
        # The general path records failures; where the parse fails only the outcome counts.
        assert whole_outcome(start, text, False) == whole_outcome(start, text, True), output
