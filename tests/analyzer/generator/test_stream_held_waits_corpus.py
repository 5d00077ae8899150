"""A stream held before a leaf (a choice still open, its events tentative: MiniCPM5's
`<![CDATA[` values) waits on while the leaf reads text without its one wake character
(`Expr.wake`); the stream knows that without asking the leaf (`stream.wake_character`), and
gives, chunk by chunk, the deltas, deviations and message of a stream that always runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rendered_calls import ARGUMENTS, generated_call_or_skip, template_paths
from skipping_streams import AlwaysRuns

from analyzer.parsing.stream import HELD, StreamParser, wake_character
from analyzer.peg import Expr

# A long value as written, and wrapped as a CDATA section (which MiniCPM5's template writes for
# a value with `<`, `&` or a newline; a choice stays open until the section ends).
LONG = (" ".join([ARGUMENTS["city"]] * 30),
        "<![CDATA[" + "def render(x):\n    return x  # café\n" * 8 + "]]>")


def edited(rendering: str) -> list[str]:
    """The rendering with its city's value made long."""
    return [rendering.replace(ARGUMENTS["city"], value, 1) for value in LONG]


def held_wake(stream: StreamParser, chunk: str) -> Any:
    """The leaf a held stream waits in, when the text holds none of its one wake character."""
    quiet = stream.quiet
    if quiet is None or quiet[2] is not HELD:
        return None
    wake = wake_character(quiet[0])
    return quiet[0] if wake and wake not in stream.buffer + chunk else None


def streamed_asking(stream: StreamParser, tail: str, chunks: list[str],
                    monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], int, int]:
    """Stream; return each feed's deltas and deviations, how many chunks were held waits
    without the wake character, and how often their leaf was asked."""
    outcomes: list[Any] = []
    held = asked = 0
    for chunk in ([tail] if tail else []) + chunks:
        leaf = held_wake(stream, chunk)
        if leaf is not None:
            held += 1
            waiting_end = type(leaf).waiting_end

            def counted(self: Expr, text: str, at: int, ask: Any = waiting_end) -> int:
                nonlocal asked
                asked += 1
                return int(ask(self, text, at))

            monkeypatch.setattr(type(leaf), "waiting_end", counted)
        outcomes.append((stream.feed(chunk), stream.deviations))
        monkeypatch.undo()
    return outcomes + [(stream.finish(), stream.deviations)], held, asked


def test_a_leaf_with_one_wake_character_gives_it() -> None:
    class Waits(Expr):
        __slots__ = ()
        wake = frozenset("]")

    class WakesOnTwo(Expr):
        __slots__ = ()
        wake = frozenset("]>")

    assert (wake_character(Waits()), wake_character(WakesOnTwo()), wake_character(Expr())) == (
        "]", "", "")


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_held_stream_waits_on_without_asking_its_leaf(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    tail = parser.prompt.tail
    for output, size in [(output, size) for output in edited(rendering) for size in (3, 16)]:
        chunks = [output[at:at + size] for at in range(0, len(output), size)]
        fast = StreamParser(parser.parser, len(tail))
        outcomes, held, asked = streamed_asking(fast, tail, chunks, monkeypatch)
        slow = AlwaysRuns(parser.parser, len(tail))
        assert outcomes == [(slow.feed(chunk), slow.deviations)
                            for chunk in ([tail] if tail else []) + chunks] + [
            (slow.finish(), slow.deviations)]
        assert fast.message() == slow.message()
        assert asked == 0, f"{held} held chunks asked their leaf {asked} times"


def test_some_template_holds_a_stream_before_a_leaf_with_one_wake_character() -> None:
    found = []
    for path in template_paths():
        try:
            parser, rendering = generated_call_or_skip(path)
        except pytest.skip.Exception:
            continue
        for output in edited(rendering):
            stream = StreamParser(parser.parser, len(parser.prompt.tail))
            held = 0
            for chunk in [parser.prompt.tail] + [output[at:at + 16]
                                                 for at in range(0, len(output), 16)]:
                held += held_wake(stream, chunk) is not None
                stream.feed(chunk)
            if held:
                found.append(path.stem)
    assert found, "no template's stream holds before a leaf with one wake character"
