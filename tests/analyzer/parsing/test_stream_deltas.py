"""The deltas one chunk sends: the message builder records each piece of the message as the
delta that sends it, joined with the delta before when both add to the same text (content,
reasoning, or one call's arguments); a call's header and a late id stand alone. These pin the
exact sequence, chunk by chunk, not only the message the deltas fold into."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer import peg as p
from analyzer.parsing.stream import Delta, StreamParser, ToolCallDelta

BENCH = Path(__file__).resolve().parents[3] / ".." / "shared" / "bench-inputs"
OUTPUT = (
    'Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=location>\nSeoul, "KR"\n'
    "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\nDone."
)


def args(text: str) -> Delta:
    return Delta(tool_calls=(ToolCallDelta(0, arguments=text),))


HEADER = Delta(tool_calls=(ToolCallDelta(0, id="", name="get_weather", arguments=""),))
# As 47d2fca (fragments merged per chunk, then turned into deltas) sent them.
EXPECTED = {
    16: [
        [Delta(content="Let me check.\n")],
        [],
        [HEADER],
        [],
        [args('{"location": "Seoul, \\"KR')],
        [args('\\""')],
        [args(', "days": ')],
        [args("3")],
        [args("}")],
        [Delta(content="\nDone.")],
        [],
    ],
    40: [
        [Delta(content="Let me check.\n")],
        [HEADER, args('{"location": "Seoul, \\"KR')],
        [args('\\"", "days": ')],
        [args("3}"), Delta(content="\nDone.")],
        [],
    ],
}


def qwen3_coder() -> p.Parser:
    if not BENCH.is_dir():
        pytest.skip(f"bench inputs not found at {BENCH}")
    from bench.generated import GRAMMARS as GENERATED

    return GENERATED["qwen3-coder"](json.loads((BENCH / "tools.json").read_text("utf-8")))


@pytest.mark.parametrize("size", sorted(EXPECTED))
def test_each_chunk_sends_the_deltas_it_sent_before(size: int) -> None:
    stream = StreamParser(qwen3_coder())
    chunks = [OUTPUT[at : at + size] for at in range(0, len(OUTPUT), size)]
    sent = [stream.feed(chunk) for chunk in chunks] + [stream.finish()]
    assert sent == EXPECTED[size]


def reasoning_then_content() -> p.Parser:
    thinking = p.literal("<think>") + p.reasoning(p.until("</think>")) + p.literal("</think>")
    words = p.repeat(p.content(p.until(" ")) + p.content(p.literal(" ")), 0, None)
    return p.Parser(thinking + words + p.content(p.rest()))


def test_pieces_of_one_text_leave_as_one_delta_and_other_texts_apart() -> None:
    stream = StreamParser(reasoning_then_content())
    sent = stream.feed("<think>hm</think>one two three")
    # Six content captures (words and spaces) in one chunk: one delta; the reasoning apart.
    assert sent == [Delta(reasoning_content="hm"), Delta(content="one two ")]
    assert stream.finish() == [Delta(content="three")]
