"""A JSON value nested deeper than Python recurses (hostile or broken model output) is read by
the resumable scanner where json's C decoder gives up: one-shot and streamed parses keep the
call and never raise RecursionError. Derived from each template's own rendering of a call."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.analyzer.generator.rendered_calls import (
    checked,
    generated_call_or_skip,
    template_paths,
)

# Deeper than the C decoder's recursion allows at the default recursion limit.
DEPTH = max(5000, 5 * sys.getrecursionlimit())
DEEP = "[" * DEPTH + "1" + "]" * DEPTH


@pytest.mark.parametrize("path", template_paths(), ids=lambda path: path.stem)
def test_a_value_nested_deeper_than_python_recurses_is_kept(path: Path) -> None:
    parser, output = generated_call_or_skip(path)
    if '"query": "hotels"' not in output:
        pytest.skip("the rendering does not write the arguments as a JSON object")
    deep_output = output.replace('"hotels"', DEEP, 1)
    report = checked(parser, deep_output, sizes=(16, len(deep_output)))
    assert [call.name for call in report.message.tool_calls] == ["search_records"]
    assert DEEP in report.message.tool_calls[0].arguments
