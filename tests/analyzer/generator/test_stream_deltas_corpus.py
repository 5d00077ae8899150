"""The deltas of each chunk, on every template's rendering of a call (after some content) in
chunks of several sizes: each sets one thing, neighbours never add to the same text (the
message builder joins those pieces into one delta), a call's header carries no arguments, and
they fold into the one-shot message. See tests/analyzer/parsing/test_stream_deltas.py for
the exact sequences."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from rendered_calls import generated_call_or_skip, template_paths

from analyzer.parsing.stream import Delta, StreamParser, accumulate


def joinable(last: Delta, delta: Delta) -> bool:
    """Tell whether two neighbouring deltas add to the same text (one should have been sent)."""
    if last.content is not None or last.reasoning_content is not None:
        return (last.content is None) == (delta.content is None) and (
            last.reasoning_content is None) == (delta.reasoning_content is None)
    if not (last.tool_calls and delta.tool_calls):
        return False
    (before,), (after,) = last.tool_calls, delta.tool_calls
    return before.index == after.index and all(
        call.id is None and call.name is None and call.arguments for call in (before, after))


def check_shapes(deltas: list[Delta]) -> None:
    """Each delta sets one thing; neighbours never add to the same text; a header sends no
    arguments (they follow in a delta of their own)."""
    for delta in deltas:
        fields = [delta.content, delta.reasoning_content]
        assert sum(field is not None for field in fields) + (len(delta.tool_calls) > 0) == 1
        assert len(delta.tool_calls) <= 1, delta
        for call in delta.tool_calls:
            assert call.name is None or call.arguments == "", delta
    for last, delta in itertools.pairwise(deltas):
        assert not joinable(last, delta), (last, delta)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_chunks_deltas_join_pieces_of_one_text_on_rendered_calls(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    output = "Let me look that up.\n\n" + rendering
    report = parser.parse_report(output)
    for size in (1, 5, 16, len(output)):
        chunks = [output[at : at + size] for at in range(0, len(output), size)]
        stream = StreamParser(parser.parser)
        deltas = stream.feed(parser.prompt.tail) if parser.prompt.tail else []
        check_shapes(deltas)
        for chunk in chunks:
            sent = stream.feed(chunk)
            check_shapes(sent)
            deltas += sent
        sent = stream.finish()
        check_shapes(sent)
        assert accumulate(deltas + sent) == report.message, size
