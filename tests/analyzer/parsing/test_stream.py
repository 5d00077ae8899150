"""Streaming: deltas concatenate to the one-shot parse for every split of the input."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from skipping_streams import AlwaysRuns, CountsSkips

from analyzer import peg as p
from analyzer.parsing.deviations import collected
from analyzer.parsing.mapper import to_message
from analyzer.parsing.message import Message
from analyzer.parsing.recovery import recovered_events
from analyzer.parsing.stream import Accumulator, Delta, StreamParser, accumulate, stream_parse
from analyzer.peg.expressions import resumed
from analyzer.peg.parser import run
from bench.handbuilt import GRAMMARS

BENCH = Path(__file__).resolve().parents[3] / ".." / "shared" / "bench-inputs"
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "days": {"type": "integer"},
                    "hidden": {"type": "boolean"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "tags": {"type": "array"}},
            },
        },
    },
]


def reasoning_hermes() -> p.Parser:
    """Optional <think> block, content, then Hermes-style JSON calls."""
    thinking = (
        p.literal("<think>") + p.commit() + p.reasoning(p.until("</think>")) + p.literal("</think>")
    )
    return p.Parser(p.optional(thinking) + p.space() + GRAMMARS["hermes-2-pro"](TOOLS).root)


PARSERS = {
    "reasoning-hermes": reasoning_hermes(),
    "functionary": GRAMMARS["functionary-v3.1"](TOOLS),
    "qwen3-coder": GRAMMARS["qwen3-coder"](TOOLS),
}
SAMPLES = {
    "reasoning-hermes": (
        '<think>Plan: call "x" < y </thi</think>\nHi <tool_ there.\n'
        '<tool_call>\n{"name": "get_weather", "arguments": '
        '{"location": "Par\\"is", "days": 3, "n": [1.5e2, true, null]}}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>'
    ),
    "functionary": (
        'Sure<function=search>{"q": "caf\\u00e9 \\\\ x", "tags": ["a"]}</function>'
        '<function=get_weather>{"days": -12}</function>'
    ),
    "qwen3-coder": (
        "Let me check.\n<tool_call>\n<function=get_weather>\n"
        "<parameter=location>\nNew <b> York\n\n</parameter>\n"
        "<parameter=days>\n10\n</parameter>\n<parameter=hidden>\nTrue\n</parameter>\n"
        "</function>\n</tool_call>\n<tool_call>\n<function=search>\n"
        "<parameter=tags>\n['x', \"y\"]\n</parameter>\n</function>\n</tool_call>"
    ),
}


def streamed(parser: p.Parser, chunks: list[str]) -> Message:
    return accumulate(stream_parse(parser, chunks))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_two_way_split_streams_to_the_one_shot_message(name: str) -> None:
    parser, text = PARSERS[name], SAMPLES[name]
    one_shot = to_message(parser.parse(text))
    assert one_shot.tool_calls, "the sample must exercise tool calls"
    for cut in range(len(text) + 1):
        assert streamed(parser, [text[:cut], text[cut:]]) == one_shot, f"split at {cut}"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_one_character_chunks_stream_to_the_one_shot_message(name: str) -> None:
    parser, text = PARSERS[name], SAMPLES[name]
    assert streamed(parser, list(text)) == to_message(parser.parse(text))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_prefix_gives_a_message_that_only_grows(name: str) -> None:
    parser, text = PARSERS[name], SAMPLES[name]
    stream = StreamParser(parser)
    previous = Message()
    for char in text:
        stream.feed(char)
        current = stream.message()
        assert current.content.startswith(previous.content)
        assert current.reasoning_content.startswith(previous.reasoning_content)
        for before, now in zip(previous.tool_calls, current.tool_calls, strict=False):
            assert before.name in ("", now.name) and before.id in ("", now.id)
            assert now.arguments.startswith(before.arguments)
        previous = current


def test_qwen_sample_maps_as_its_template_means() -> None:
    message = to_message(PARSERS["qwen3-coder"].parse(SAMPLES["qwen3-coder"]))
    assert message.content == "Let me check.\n"
    assert [json.loads(c.arguments) for c in message.tool_calls] == [
        {"location": "New <b> York\n", "days": 10, "hidden": True},
        {"tags": ["x", "y"]},
    ]


def chunkings(text: str) -> st.SearchStrategy[list[str]]:
    """Split text at random points."""
    cuts = st.lists(st.integers(0, len(text)), max_size=12).map(sorted)
    return cuts.map(
        lambda points: [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    )


@settings(max_examples=150, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(SAMPLES)))
def test_random_chunkings_stream_to_the_one_shot_message(data: st.DataObject, name: str) -> None:
    parser, text = PARSERS[name], SAMPLES[name]
    chunks = data.draw(chunkings(text))
    assert streamed(parser, chunks) == to_message(parser.parse(text))


TOKENS = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_",
    "</thi",
    "\n",
    " ",
    "x",
    '"',
    '{"name": "search", "arguments": ',
    '{"q": "a"}',
    "}",
    "{",
    "[1, 2",
    "]",
    "1",
    "true",
]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(TOKENS), max_size=14), data=st.data())
def test_stream_and_one_shot_agree_on_arbitrary_text_including_errors(
    pieces: list[str], data: st.DataObject
) -> None:
    parser = PARSERS["reasoning-hermes"]
    text = "".join(pieces)
    events, _ = recovered_events(parser.start, text, partial=False)
    expected = to_message(p.ParseResult(text=text, events=tuple(events), complete=True))
    stream = StreamParser(parser)
    deltas = [d for chunk in data.draw(chunkings(text)) for d in stream.feed(chunk)]
    assert accumulate(deltas + stream.finish()) == expected
    one_shot = p.ParseResult(text=text, events=tuple(events), complete=True)
    assert stream.deviations == collected(one_shot.problems, one_shot.notices)


def test_deltas_announce_a_call_with_its_name_before_argument_fragments() -> None:
    text = '<tool_call>\n{"name": "search", "arguments": {"q": "abc"}}\n</tool_call>'
    deltas = stream_parse(PARSERS["reasoning-hermes"], list(text))
    calls = [d.tool_calls[0] for d in deltas if d.tool_calls]
    assert calls[0].name == "search" and calls[0].arguments == ""
    assert all(c.name is None for c in calls[1:])
    assert "".join(c.arguments or "" for c in calls) == '{"q": "abc"}'
    assert len(calls) > 3, "arguments should stream in fragments"


def test_delta_to_dict_has_the_openai_shape() -> None:
    deltas = stream_parse(PARSERS["functionary"], ['<function=search>{"q": 1}</function>'])
    assert [d.to_dict() for d in deltas] == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "",
                    "type": "function",
                    "function": {"name": "search", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"q": 1}'}}]},
    ]


def test_content_streams_before_the_output_ends() -> None:
    stream = StreamParser(PARSERS["functionary"])
    assert stream.feed("Hello wor") == [Delta(content="Hello wor")]
    assert stream.feed("ld <func") == [Delta(content="ld ")]
    assert stream.finish() == [Delta(content="<func")]


def test_a_stream_break_is_a_deviation_placed_in_the_whole_output() -> None:
    stream = StreamParser(PARSERS["functionary"])
    stream.feed('Hi\nthere <function=search>{"q": 1}</function>')
    stream.feed("<function=nope>")
    stream.finish()
    text = 'Hi\nthere <function=search>{"q": 1}</function><function=nope>'
    [deviation] = stream.deviations
    assert (deviation.kind, deviation.offset) == ("malformed_call", text.index("nope"))
    assert (deviation.line, deviation.column) == (2, text.index("nope") - 2)
    assert [c.name for c in stream.message().tool_calls] == ["search"]  # the sibling stays


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_bench_outputs_parse_to_the_expected_calls_and_stream_identically(name: str) -> None:
    if not BENCH.is_dir():
        pytest.skip(f"bench inputs not found at {BENCH}")
    tools = json.loads((BENCH / "tools.json").read_text(encoding="utf-8"))
    parser = GRAMMARS[name](tools)
    text = (BENCH / name / "output-25k.txt").read_text(encoding="utf-8")
    expected = json.loads((BENCH / name / "expected-25k.json").read_text(encoding="utf-8"))
    message = to_message(parser.parse(text))
    assert [c.name for c in message.tool_calls] == [c["name"] for c in expected["tool_calls"]]
    assert [json.loads(c.arguments) for c in message.tool_calls] == [
        c["arguments"] for c in expected["tool_calls"]
    ]
    assert message.content == ""
    rng = random.Random(7)
    cuts = sorted(rng.sample(range(len(text)), 400))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert streamed(parser, chunks) == message


def extends(earlier: Message, later: Message) -> bool:
    """Tell whether later only adds to earlier (texts grow, calls keep names and grow)."""
    if not later.content.startswith(earlier.content):
        return False
    if not later.reasoning_content.startswith(earlier.reasoning_content):
        return False
    if len(earlier.tool_calls) > len(later.tool_calls):
        return False
    return all(
        a.name in ("", b.name) and b.arguments.startswith(a.arguments)
        for a, b in zip(earlier.tool_calls, later.tool_calls, strict=False)
    )


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(st.sampled_from(TOKENS), max_size=12))
def test_every_partial_prefix_parse_is_extended_by_the_full_parse(pieces: list[str]) -> None:
    parser = PARSERS["reasoning-hermes"]
    text = "".join(pieces)
    try:
        full = to_message(parser.parse(text))
    except p.PegParseError:
        return
    for cut in range(len(text) + 1):
        assert extends(to_message(parser.parse(text[:cut], partial=True)), full), text[:cut]


def test_empty_chunks_change_nothing() -> None:
    parser, text = PARSERS["qwen3-coder"], SAMPLES["qwen3-coder"]
    stream = StreamParser(parser)
    deltas: list[Delta] = []
    for char in text:
        deltas += stream.feed(char)
        assert stream.feed("") == []
    assert accumulate(deltas + stream.finish()) == to_message(parser.parse(text))


def test_feeding_after_finish_is_refused() -> None:
    stream = StreamParser(PARSERS["functionary"])
    stream.finish()
    with pytest.raises(ValueError, match="after finish"):
        stream.feed("x")


def test_text_around_calls_streams_apart_for_every_split() -> None:
    call = p.tool(p.literal("<call>") + p.commit() + p.tool_name(p.literal("f"))
                  + p.tool_args(p.json_value()) + p.literal("</call>"))
    text = p.content(p.until("<call>"))
    parser = p.Parser(text + p.zero_or_more(call + text))
    output = 'Hi<call>f{"a": 1}</call>Done<call>f{}</call> end<call>f{}</call>\n'
    one_shot = to_message(parser.parse(output))
    assert one_shot.content == "Hi\nDone end"
    for cut in range(len(output) + 1):
        assert streamed(parser, [output[:cut], output[cut:]]) == one_shot, f"split at {cut}"
    assert streamed(parser, list(output)) == one_shot


def test_an_accumulator_fed_delta_by_delta_builds_the_one_shot_message() -> None:
    parser, text = PARSERS["qwen3-coder"], SAMPLES["qwen3-coder"]
    stream, client = StreamParser(parser), Accumulator()
    for char in text:
        for delta in stream.feed(char):
            client.add(delta)
    for delta in stream.finish():
        client.add(delta)
    assert client.message() == to_message(parser.parse(text))


class CountedStarts(p.Expr):
    """An expression that counts how often it is matched from its start."""

    __slots__ = ("item", "starts")

    def __init__(self, item: p.Expr) -> None:
        self.item = item
        self.starts = 0

    def match(self, st: Any, pos: int) -> int:
        self.starts += 1
        return self.item.match(st, pos)

    def describe(self) -> str:
        return self.item.describe()


def calls_only_at_the_end(lookahead: p.Expr) -> p.Parser:
    """Text in which `<c>` starts calls only if calls run to the end (else it is text)."""
    calls = p.one_or_more(p.tool(p.literal("<c>") + p.tool_name(p.literal("f"))
                                 + p.tool_args(p.json_value()) + p.literal("</c>")))
    text = p.content(p.until("<c>")) + p.zero_or_more(
        p.not_followed_by(lookahead) + p.content(p.literal("<c>")) + p.commit()
        + p.content(p.until("<c>")))
    return p.Parser(text + p.optional(calls) + p.end())


def lookahead_calls() -> p.Expr:
    return p.one_or_more(p.literal("<c>") + p.literal("f") + p.json_value() + p.literal("</c>"))


def test_a_lookahead_to_the_end_streams_like_the_one_shot_parse() -> None:
    parser = calls_only_at_the_end(lookahead_calls() + p.end())
    text = 'think <c>f{}</c> more <c>f{"a": 1}</c><c>f{}</c>'
    one_shot = to_message(parser.parse(text))
    assert (one_shot.content, len(one_shot.tool_calls)) == ("think <c>f{}</c> more ", 2)
    for cut in range(len(text) + 1):
        assert streamed(parser, [text[:cut], text[cut:]]) == one_shot, f"split at {cut}"
    assert streamed(parser, list(text)) == one_shot


def test_an_undecided_lookahead_goes_on_where_the_last_chunk_left_it() -> None:
    counted = CountedStarts(lookahead_calls() + p.end())
    stream = StreamParser(calls_only_at_the_end(counted))
    stream.feed("think ")
    for char in '<c>f{"a": "' + "x" * 500 + '"}</c>':
        stream.feed(char)
    assert counted.starts < 10  # not once per chunk: the lookahead resumes
    stream.finish()
    assert json.loads(stream.message().tool_calls[0].arguments) == {"a": "x" * 500}


def delimited_reasoning() -> p.Parser:
    """Reasoning up to `[END]` if the output has one, else everything is content."""
    reasoning = p.reasoning(p.until("[END]", "[STOP]")) + p.literal("[END]")
    return p.Parser(p.optional(reasoning) + p.content(p.rest()))


LONG_TEXTS = [
    "x" * 700 + "[EN" + "y" * 300 + "[END]answer",
    "x" * 700 + "[STOP] no end marker " + "y" * 300,
    "x" * 1000,
]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), text=st.sampled_from(LONG_TEXTS))
def test_a_long_undecided_choice_streams_like_the_one_shot_parse(
    data: st.DataObject, text: str
) -> None:
    parser = delimited_reasoning()
    chunks = data.draw(chunkings(text))
    assert streamed(parser, chunks) == to_message(parser.parse(text))


@pytest.mark.parametrize("text", LONG_TEXTS)
def test_a_long_undecided_choice_streams_char_by_char_like_the_one_shot_parse(text: str) -> None:
    parser = delimited_reasoning()
    assert streamed(parser, list(text)) == to_message(parser.parse(text))




def delta_lists(parser: p.Parser, chunks: list[str]) -> tuple[list[Delta], list[Delta], int]:
    """Stream chunks with and without skipping; return both delta lists and the skips."""
    skipping, running = CountsSkips(parser), AlwaysRuns(parser)
    fast = [d for chunk in chunks for d in skipping.feed(chunk)] + skipping.finish()
    slow = [d for chunk in chunks for d in running.feed(chunk)] + running.finish()
    return fast, slow, skipping.skipped


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("size", [1, 3, 16])
def test_skipped_runs_give_the_deltas_a_run_gives(name: str, size: int) -> None:
    text = SAMPLES[name]
    chunks = [text[at : at + size] for at in range(0, len(text), size)]
    fast, slow, _ = delta_lists(PARSERS[name], chunks)
    assert fast == slow


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_generated_parsers_skip_runs_on_bench_outputs_with_the_same_deltas(name: str) -> None:
    if not BENCH.is_dir():
        pytest.skip(f"bench inputs not found at {BENCH}")
    from bench.generated import GRAMMARS as GENERATED

    tools = json.loads((BENCH / "tools.json").read_text(encoding="utf-8"))
    text = (BENCH / name / "output-25k.txt").read_text(encoding="utf-8")
    chunks = [text[at : at + 2] for at in range(0, len(text), 2)]
    fast, slow, skipped = delta_lists(GENERATED[name](tools), chunks)
    assert fast == slow
    if name == "qwen3-coder":  # tagged values: a scan up to the closing tag
        assert skipped > len(chunks) // 4, "most chunks inside values need no run"


def nested_rules() -> p.Parser:
    """Calls in rules three deep, each rule a sequence, so a resume point sits inside all."""
    value = p.Rule("value", p.literal("<v>") + p.content(p.until("</v>")) + p.literal("</v>"))
    call = p.Rule("call", p.tool(p.literal("<c>") + p.commit() + value + p.literal("</c>")))
    calls = p.Rule("calls", p.repeat(call + p.space(), 1, None))
    return p.Parser(p.content(p.until("<c>")) + calls)


def resume_depth(expr: p.Expr) -> int:
    """Count the wrappers a stream walks down from its resume point to the leaf that waits."""
    depth = 0
    while expr.children():
        expr, depth = expr.children()[0], depth + 1
    return depth


def test_a_resume_point_inside_nested_rules_stays_flat() -> None:
    stream = StreamParser(nested_rules())
    depths = []
    for char in "hi <c><v>abc</v></c> <c><v>de":
        stream.feed(char)
        depths.append(resume_depth(stream.expr))
    # A sequence, the rules' names in one scope, the capture: not one level per rule.
    assert max(depths[-3:]) <= 3


@pytest.mark.parametrize("cut", [8, 12, 26, 29])
def test_an_error_after_resuming_names_the_rule_a_one_shot_parse_names(cut: int) -> None:
    parser, text = nested_rules(), "hi <c><v>abc</v></c> <c><v>de</v>x"
    with pytest.raises(p.PegParseError) as one_shot:
        parser.parse(text)
    first = run(parser.start, text[:cut], 0, partial=True)
    assert first.needs_more
    rest = text[first.state.resume_pos :]
    with pytest.raises(p.PegParseError) as resumed_error:
        run(resumed(first.state), rest, 0, partial=False)
    assert one_shot.value.rule == resumed_error.value.rule == "call"
    assert resumed_error.value.expected == one_shot.value.expected
    assert first.state.resume_pos + resumed_error.value.offset == one_shot.value.offset


def test_a_value_skips_runs_from_the_chunk_after_its_opening() -> None:
    parser = p.Parser(p.literal("<v>") + p.content(p.until("</v>")) + p.literal("</v>"))
    chunks = ["<v>ab", "cd", "ef", "</v>"]
    fast, slow, skipped = delta_lists(parser, chunks)
    assert fast == slow
    # The run of "<v>ab" leaves the value's capture to continue: "cd" and "ef" need no run
    # (not only "ef", after a second run has seen the capture resume as itself).
    assert skipped == 2


def generated_qwen3_coder() -> p.Parser:
    if not BENCH.is_dir():
        pytest.skip(f"bench inputs not found at {BENCH}")
    from bench.generated import GRAMMARS as GENERATED

    return GENERATED["qwen3-coder"](json.loads((BENCH / "tools.json").read_text("utf-8")))


@pytest.mark.parametrize("tail", ["Seoul\n</par", "Seoul, a < b\n</", "a<b", "Seoul\n"])
def test_a_value_skips_a_chunk_that_ends_where_its_closing_may_begin(tail: str) -> None:
    head = "<tool_call>\n<function=get_weather>\n<parameter=location>\nSo "
    rest = "ameter>\n</function>\n</tool_call>"
    fast, slow, skipped = delta_lists(generated_qwen3_coder(), [head, tail, rest])
    assert fast == slow
    # Nothing in the chunk can close the value yet: the text before `\n</par` only stretches it.
    assert skipped == 1


def test_a_deviation_after_many_dropped_chunks_is_placed_in_the_whole_output() -> None:
    text = "".join(f"line {n} of the answer\n" for n in range(200))
    text += 'Done. <function=search>{"q": 1}</function><function=nope>'
    stream = StreamParser(PARSERS["functionary"])
    for at in range(0, len(text), 3):  # far more dropped pieces than are kept uncounted
        stream.feed(text[at : at + 3])
    stream.finish()
    [deviation] = stream.deviations
    at = text.index("nope")
    assert (deviation.kind, deviation.offset) == ("malformed_call", at)
    assert (deviation.line, deviation.column) == (201, at - text.rfind("\n", 0, at))


def test_a_scan_skips_a_chunk_that_ends_in_half_its_marker() -> None:
    parser = p.Parser(p.literal("<v>") + p.content(p.until("</v>")) + p.literal("</v>"))
    fast, slow, skipped = delta_lists(parser, ["<v>ab", "cd", "e<f</", "v>"])
    assert fast == slow
    # "e<f</" holds no whole `</v>`: the scan reads on to before `</`, as a run would.
    assert skipped == 2


def mutated(text: str, seed: int) -> str:
    """Return text with a few edits a model might make: characters inserted (markup's
    first characters among them), deleted, a tag's name changed, or the end cut off."""
    rng = random.Random(seed)
    for _ in range(4):
        at = rng.randrange(len(text))
        edit = rng.choice(["insert", "delete", "rename", "cut"])
        if edit == "insert":
            piece = rng.choice(["<", "</", "\n<", "<param", "</parameter", "x"])
            text = text[:at] + piece + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + rng.randint(1, 3) :]
        elif edit == "rename":
            text = text.replace("<parameter=", "<parameter=zz", 1)
        else:
            text = text[: max(at, len(text) // 2)]
    return text


@pytest.mark.parametrize("seed", range(12))
def test_skipped_runs_give_the_deltas_and_deviations_a_run_gives_on_mutated_calls(
        seed: int) -> None:
    parser = generated_qwen3_coder()
    text = mutated((BENCH / "qwen3-coder" / "output-25k.txt").read_text("utf-8")[:3000], seed)
    for size in (5, 16):
        chunks = [text[at : at + size] for at in range(0, len(text), size)]
        skipping, running = CountsSkips(parser), AlwaysRuns(parser)
        fast = [d for chunk in chunks for d in skipping.feed(chunk)] + skipping.finish()
        slow = [d for chunk in chunks for d in running.feed(chunk)] + running.finish()
        assert fast == slow, (size, text)
        assert skipping.deviations == running.deviations, (size, text)


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("seed", range(8))
def test_skipped_scans_give_the_deltas_a_run_gives_on_mutated_samples(name: str, seed: int) -> None:
    text = mutated(SAMPLES[name] * 2, seed)
    for size in (1, 3, 16):
        chunks = [text[at : at + size] for at in range(0, len(text), size)]
        fast, slow, _ = delta_lists(PARSERS[name], chunks)
        assert fast == slow, (size, text)

def test_a_value_held_open_by_a_choice_that_stays_held_skips_runs() -> None:
    # The plain-text alternative cannot fail: until `]]>` comes, every run would hold the
    # choice at its start with nothing final, so chunks without `]` need none.
    cdata = p.literal("<![CDATA[") + p.content(p.until("]]>")) + p.literal("]]>")
    parser = p.Parser(p.literal("<v>") + p.choice(cdata, p.content(p.until("</v>")))
                      + p.literal("</v>"))
    fast, slow, skipped = delta_lists(parser, ["<v><![CDATA[ab", "cd", "ef", "]]></v>"])
    assert fast == slow
    assert skipped == 2


@pytest.mark.parametrize("later", [
    p.literal("xyz") + p.content(p.rest()),  # kept while the text ends inside its prefix
    p.literal("x") + p.content(p.until(">")) + p.literal(">!"),  # kept while undecided
])
def test_a_choice_held_open_by_an_alternative_that_may_fail_runs_again(later: p.Expr) -> None:
    # "q" and ">?" rule the later alternative out: the first one's text becomes final.
    parser = p.Parser(p.choice(p.literal("x") + p.content(p.until("]")) + p.literal("]"), later))
    fast, slow, _ = delta_lists(parser, ["xy", "q", ">?", "r", "]"])
    assert fast == slow
    assert fast and (fast[0].content or "").startswith("yq")


def test_a_json_value_reads_on_through_strings_escapes_and_numbers_without_runs() -> None:
    parser = p.Parser(p.literal("<a>") + p.tool(p.tool_name(p.literal("f"))
                                                + p.tool_args(p.json_value()))
                      + p.literal("</a>"))
    text = '<a>f{"s": "a\\"b\\\\c\\u00e9", "n": [12.5, true, {"k": null}], "t": "end"}</a>'
    for size in (1, 2, 5):
        chunks = [text[at : at + size] for at in range(0, len(text), size)]
        fast, slow, skipped = delta_lists(parser, chunks)
        assert fast == slow
        assert accumulate(fast) == to_message(parser.parse(text))
        assert skipped > len(chunks) // 2, "the value's chunks need no run"
