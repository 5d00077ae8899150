"""A stream whose chunk ends right before a JSON arguments object (the marker before the
arguments, a special token a server never splits) waits at the arguments (`ValueAhead`), and
reads the next chunk into the object without running the grammar when that chunk begins the
object and does not end it (`ValueAhead.read_on`, `StreamParser._read_on`). Each feed's deltas
and deviations, and the message, must equal a stream that runs the grammar on every chunk:
for every template whose rendering of a call leaves the stream there, with the object's
first chunk cut at every position (inside a string, after a backslash, inside a number or a
word, at the object's end, inside and after the marker that follows), with objects a model
may break, and with whitespace before the object."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import generated_call, template_paths
from skipping_streams import AlwaysRuns, CountsSkips

from analyzer.parsing.stream import UNKNOWN, StreamParser
from analyzer.peg.json_values import ValueAhead

# The objects put in place of the rendered arguments: escapes, a number and a word cut by
# the chunk, nesting; then broken ones the scan refuses (an invalid escape, NaN, a raw
# control character). DEEP: nested past the C decoder's recursion limit, unfinished.
OBJECTS = (
    '{"query": "ho\\"t\\\\els\\u00e9", "city": "Paris", "n": -12.5e3, "ok": true,'
    ' "l": [1, {"a": null}, []], "e": {}}',
    '{"query": "ho\\qtels", "city": "Paris"}',
    '{"query": NaN, "city": "Paris"}',
    '{"query": "ho\x01tels"}',
)
DEEP = '{"query": ' + "[" * 3000


def arguments_span(output: str) -> tuple[int, int] | None:
    """Where the rendered arguments object is (the object holding the "query" argument)."""
    at = output.find('"query"')
    start = output.rfind("{", 0, at) if at >= 0 else -1
    if start < 0:
        return None
    end = output.find("}", at)
    return (start, end + 1) if end > 0 else None


def waits_ahead(stream: StreamParser) -> bool:
    """Tell whether the stream waits at a value not begun, ready to read into it."""
    if stream.quiet is None:
        return False
    leaf, _, capture, _, _, _, _ = stream.quiet
    return isinstance(leaf, ValueAhead) and capture is not UNKNOWN


def feeds(stream: StreamParser, chunks: list[str]) -> list[object]:
    """Each feed's deltas and the deviations known after it."""
    return [(stream.feed(chunk), stream.deviations) for chunk in chunks if chunk]


def finished(stream: StreamParser) -> list[object]:
    """finish's deltas, the deviations, and the message."""
    return [stream.finish(), stream.deviations, stream.message()]


def cases(output: str, start: int, end: int) -> list[tuple[str, int]]:
    """Outputs with each object in place of the arguments, and where the object begins."""
    head, rest = output[:start], output[end:]
    found = [(head + obj + rest, start) for obj in OBJECTS]
    found.append((head + "\n " + OBJECTS[0] + rest, start))  # whitespace before the object
    return found


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_streams_reading_into_values_equal_running_streams(path: Path) -> None:
    found = generated_call(path)
    span = found and arguments_span(found[1])
    if not found or not span:
        pytest.skip("no generated parser, or no JSON arguments object in the rendering")
    parser, rendering = found
    tail = parser.prompt.tail
    probe = parser.parser
    waiting = CountsSkips(probe)
    for chunk in ([tail] if tail else []) + [rendering[: span[0]]]:
        waiting.feed(chunk)
    if not waits_ahead(waiting):
        pytest.skip("the stream does not wait at the arguments before they begin")
    read_in = 0
    for output, start in cases(rendering, *span):
        for cut in range(start + 1, len(output) + 1):
            chunks = [output[:start], output[start:cut]]
            chunks += [output[at : at + 16] for at in range(cut, len(output), 16)]
            fast, slow = CountsSkips(probe), AlwaysRuns(probe)
            fed = feeds(fast, [tail, chunks[0]])  # the stream waits before the object
            runs = fast.runs
            fed += feeds(fast, chunks[1:2])
            read_in += fast.runs == runs  # the object's first chunk needed no run
            fed += feeds(fast, chunks[2:])
            fed += finished(fast)
            assert fed == feeds(slow, [tail, *chunks]) + finished(slow), chunks
    assert read_in > 0, "some first chunk of an object is read without a run"


def test_a_value_ahead_reads_in_only_an_unfinished_object() -> None:
    """What ValueAhead.read_on answers, by what a run would do with the chunk."""
    ahead = ValueAhead()
    ahead.opening = (None, 0, None, False)
    end, leaf = ahead.read_on('{"a": "b\\')
    assert (end, type(leaf).__name__) == (8, "JsonContinue")  # before the backslash
    assert ahead.read_on('{"a": 12')[0] == 6  # before the number, which may grow
    assert ahead.read_on('{"a": tr')[0] == 6  # before the word
    for ended_or_not_begun in ('{"a": 1}', '{"a": 1}<|end|>', ' {"a": 1', '"{}"', "[1", ""):
        assert ahead.read_on(ended_or_not_begun)[0] == -1, ended_or_not_begun
    assert ahead.read_on('{"a": "\\q')[0] == -1  # broken: the run reports it
    assert ahead.read_on(DEEP[:256])[0] == 256
    # Past the C decoder's recursion a run's resumable scan reads it (NO_VALUE): the same.
    assert ahead.read_on(DEEP)[0] == len(DEEP)
    ahead.opening = None
    assert ahead.read_on('{"a": "b')[0] == -1  # it opens no JSON value capture
