"""Tests for analyzer/parsing/recovery.py: a break keeps what came before and reads on."""

from __future__ import annotations

from analyzer import peg as p
from analyzer.parsing.deviations import collected
from analyzer.parsing.mapper import to_message
from analyzer.parsing.recovery import recovered_events, unnamed_call_open
from analyzer.parsing.stream import StreamParser, accumulate

CALL = p.tool(p.literal("<call>") + p.commit() + p.tool_name(p.literals(["f", "g"]))
              + p.literal(" ") + p.tool_args(p.json_value()) + p.literal("</call>"))
PARSER = p.Parser(p.content(p.until("<call>")) + p.zero_or_more(CALL + p.content(p.until("<call>")))
                  + p.end())


def one_shot(text: str) -> p.ParseResult:
    events, _ = recovered_events(PARSER.start, text, partial=False)
    return p.ParseResult(text=text, events=tuple(events), complete=True)


def test_a_broken_call_keeps_its_siblings_and_its_arguments_so_far() -> None:
    text = 'A<call>f {"x": 1}</call><call>g {"y": "ab</call>B<call>f {}</call>'
    result = one_shot(text)
    message = to_message(result)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("f", '{"x": 1}'), ("g", '{"y": "ab</call>B<call>f {}</call>"}')]
    [deviation] = collected(result.problems, result.notices)
    assert (deviation.kind, deviation.action, deviation.offset) == (
        "malformed_call", "kept_as_content", len(text))


def test_the_text_after_a_break_is_read_again_as_output() -> None:
    text = 'A<call>g {"y": 1 oops</call>B<call>f {}</call>'
    message = to_message(one_shot(text))
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("g", '{"y": 1 }'),
                                                                   ("f", "{}")]
    assert message.content == "A\noops</call>B"


def test_a_call_broken_before_its_name_is_dropped() -> None:
    result = one_shot("A<call>h {}</call>")
    assert to_message(result).tool_calls == ()
    [deviation] = collected(result.problems, result.notices)
    assert (deviation.action, deviation.expected) == ("dropped", "`f` or `g`")


def test_streams_break_where_the_one_shot_parse_does() -> None:
    text = 'A<call>f {"x": 1}</call><call>g {"y": 1 oops</call>B<call>h {}</call>C'
    result = one_shot(text)
    for size in (1, 3, 7, len(text)):
        stream = StreamParser(PARSER)
        deltas = [d for at in range(0, len(text), size) for d in stream.feed(text[at: at + size])]
        assert accumulate(deltas + stream.finish()) == to_message(result)
        assert stream.deviations == collected(result.problems, result.notices)


def test_an_open_call_counts_as_unnamed_until_its_name_is_complete() -> None:
    opened = (p.Role.TOOL_OPEN, 0, 0, 0, None)
    assert unnamed_call_open([opened])
    assert not unnamed_call_open([opened, (p.Role.TOOL_NAME, 0, 1, 0, None)])
    assert not unnamed_call_open([])


def streamed_every_way(parser: p.Parser, text: str) -> set[tuple[object, ...]]:
    """The messages and deviations of every chunking of text into pieces of one size."""
    found = set()
    for size in range(1, len(text) + 1):
        stream = StreamParser(parser)
        deltas = [d for at in range(0, len(text), size) for d in stream.feed(text[at: at + size])]
        message = accumulate(deltas + stream.finish())
        found.add((message, tuple((d.kind, d.action) for d in stream.deviations)))
    return found


def one_shot_with(parser: p.Parser, text: str) -> tuple[object, ...]:
    events, _ = recovered_events(parser.start, text, partial=False)
    result = p.ParseResult(text=text, events=tuple(events), complete=True)
    deviations = collected(result.problems, result.notices)
    return to_message(result), tuple((d.kind, d.action) for d in deviations)


def test_a_finished_output_cut_off_after_a_number_or_a_literal_keeps_it() -> None:
    # The output ended: the number is whole (a partial reading held it back as one that may
    # still grow, and healed the key to null).
    for value in ("5", "-12.5", "true", "null"):
        text = f'A<call>f {{"x": "a", "n": {value}'
        message, deviations = one_shot_with(PARSER, text)
        assert [(c.name, c.arguments) for c in message.tool_calls] == [
            ("f", f'{{"x": "a", "n": {value}}}')]
        assert deviations == (("malformed_call", "kept_as_content"),)
        assert streamed_every_way(PARSER, text) == {(message, deviations)}


# Calls separated by a pattern the reading waits on near the end of the text (a regex cannot
# say whether more text would complete it): the second call's start stays undecided there.
SEPARATED = p.Parser(p.content(p.until("<call>")) + CALL
                     + p.zero_or_more(p.choice(p.regex(r"\s*;\s*"), p.space()) + CALL)
                     + p.content(p.until("<call>")) + p.end())


def test_a_finished_output_cut_off_in_a_call_the_reading_left_undecided_keeps_it() -> None:
    text = '<call>f {"x": 1}</call>\n<call>g {"y": "ab'
    message, deviations = one_shot_with(SEPARATED, text)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("f", '{"x": 1}'), ("g", '{"y": "ab"}')]
    assert deviations == (("malformed_call", "kept_as_content"),)
    assert streamed_every_way(SEPARATED, text) == {(message, deviations)}
    # Not finished (a partial parse): the second call is still undecided, so not shown.
    events, _ = recovered_events(SEPARATED.start, text, partial=True)
    partial = to_message(p.ParseResult(text=text, events=tuple(events), complete=False))
    assert [c.name for c in partial.tool_calls] == ["f"]
