"""The side-by-side bench's rendered outputs parse back to the calls rendered (bench/rendered.py).

Every (SGLang detector, corpus template) pair renders the shared bench calls through the
template; our generated parser must give back exactly those calls. A regression check of the
parser on real renders of 33 templates (a few KB each, not the bench's 25 KB).
"""

from __future__ import annotations

import json

import pytest

from analyzer.parsing.mapper import to_message
from bench import rendered

# The template's own rendering loses information, so no parser can give the calls back.
UNRECOVERABLE = {
    # Python-style calls with string arguments between quotes, inner quotes not escaped.
    "lfm2.5": "renders `'...'` around a string holding `'` without escaping it",
}
SIZE = 3_000  # bytes: the first four calls, write_file's multi-line string among them


@pytest.mark.parametrize("name", [p for p in rendered.BY_NAME if p not in UNRECOVERABLE])
def test_rendered_bench_outputs_parse_to_the_rendered_calls(name: str) -> None:
    if not rendered.INPUTS.is_dir():
        pytest.skip(f"bench inputs not found at {rendered.INPUTS}")
    try:
        output = rendered.render_output(rendered.BY_NAME[name], SIZE)
    except rendered.NotRendered as why:
        pytest.skip(f"{name}: {why}")
    calls = []
    for text in output.texts:
        message = to_message(output.parser.parse(output.tail + text))
        calls += [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    assert len(calls) >= 4
    assert calls == list(output.calls)
