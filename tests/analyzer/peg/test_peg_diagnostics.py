"""Diagnostics: a marker kept as text is reported with where and why its call did not parse."""

from __future__ import annotations

import pytest

from analyzer import peg as p
from analyzer.parsing.mapper import to_message
from analyzer.parsing.stream import StreamParser, accumulate
from analyzer.peg.diagnostics import past_shared_start

NAMES = ("get_weather", "search")


def call_grammar() -> p.Expr:
    """`<call>NAME{json}</call>` for the declared names."""
    return p.rule("call", p.tool(
        p.literal("<call>") + p.tool_name(p.literals(NAMES)) + p.commit()
        + p.tool_args(p.json_value()) + p.literal("</call>")))


def text_and_calls(noted: bool = True) -> p.Parser:
    """Text up to `<call>`; a `<call>` that starts no call is text (noted when noted=True)."""
    head = p.literal("<call>") + p.literals(NAMES)
    marker = p.content(p.literal("<call>"))
    kept = p.kept_as_text(marker, head) if noted else marker
    text = p.content(p.until("<call>")) + p.zero_or_more(
        p.not_followed_by(head) + kept + p.commit() + p.content(p.until("<call>")))
    return p.Parser(text + p.zero_or_more(call_grammar() + text))


OUTPUT = 'Hi.\nTry <call>delete{"all": true}</call> or <call>search{"q": 1}</call>'


def test_a_marker_kept_as_text_is_reported_where_its_call_broke_off() -> None:
    result = text_and_calls().parse(OUTPUT)
    (problem,) = result.problems
    offset = OUTPUT.index("delete")
    assert (problem.offset, problem.line, problem.column) == (offset, 2, offset - 3)
    assert (problem.kept, problem.kept_offset) == ("<call>", OUTPUT.index("<call>"))
    assert problem.expected == ("`get_weather`", "`search`")
    assert problem.found == '`delete{"all`'  # as long as the longest name expected
    assert problem.message == (
        f"`<call>` at offset 8 kept as text: expected `get_weather` or `search` at offset "
        f"{offset} (line 2, column {offset - 3}), found `delete{{\"all`")
    line = OUTPUT.splitlines()[1]
    assert problem.context == line[:60] + "...\n" + " " * 10 + "^"  # long lines are windowed


def test_noting_a_problem_leaves_the_message_as_it_was() -> None:
    noted = to_message(text_and_calls().parse(OUTPUT))
    assert noted == to_message(text_and_calls(noted=False).parse(OUTPUT))
    assert noted.content == 'Hi.\nTry <call>delete{"all": true}</call> or '
    assert [c.name for c in noted.tool_calls] == ["search"]


def test_text_without_a_broken_marker_has_no_problem() -> None:
    assert text_and_calls().parse('Hi <call>search{"q": 1}</call> bye').problems == ()


def test_an_attempt_that_fails_at_once_is_no_problem_when_progress_is_required() -> None:
    header = p.literal("[") + p.regex(r"[a-z]+") + p.literal("]")
    grammar = p.kept_as_text(p.content(p.rest()), header + p.rest(), progress=True)
    assert p.Parser(grammar).parse("plain text").problems == ()
    (problem,) = p.Parser(grammar).parse("[abc plain").problems
    assert (problem.offset, problem.expected) == (4, ("`]`",))


@pytest.mark.parametrize("output", [
    OUTPUT,
    "x" * 300 + " <call>nope" + "y" * 100 + "\nnext line",  # a long line on both sides
    "<call>\n<call>no",  # the second marker fails at the very end
])
def test_problems_in_a_stream_equal_the_one_shot_ones_for_every_split(output: str) -> None:
    parser = text_and_calls()
    expected = parser.parse(output).problems
    assert expected, "the output must exercise a problem"
    for cut in range(len(output) + 1):
        stream = StreamParser(parser)
        stream.feed(output[:cut])
        stream.feed(output[cut:])
        stream.finish()
        assert stream.problems == expected, f"split at {cut}"
    stream = StreamParser(parser)
    deltas = [d for char in output for d in stream.feed(char)] + stream.finish()
    assert stream.problems == expected
    assert accumulate(deltas) == to_message(parser.parse(output))


def test_a_stream_lists_a_problem_once_its_line_is_complete() -> None:
    stream = StreamParser(text_and_calls())
    stream.feed("Try <call>nope")
    assert stream.problems == ()
    stream.feed(" and more\n")
    (problem,) = stream.problems
    assert (problem.found, problem.context) == (
        "`nope and mo`", "Try <call>nope and more\n" + " " * 10 + "^")


def test_a_problem_shifted_past_a_prefix_is_placed_in_what_follows() -> None:
    before = "prompt tail\nends "
    (problem,) = text_and_calls().parse(before + OUTPUT).problems
    (alone,) = text_and_calls().parse(OUTPUT).problems
    moved = problem.shifted(before)
    assert (moved.offset, moved.line, moved.column, moved.kept_offset) == (
        alone.offset, alone.line, alone.column, alone.kept_offset)


def test_a_problem_on_the_first_line_after_a_prefix_gets_its_column_back() -> None:
    output = "<call>nope{}"
    (problem,) = text_and_calls().parse("ab\ncd" + output).problems
    moved = problem.shifted("ab\ncd")
    assert (moved.offset, moved.line, moved.column) == (6, 1, 7)


@pytest.mark.parametrize(
    ("expected", "text", "moved"),
    [
        (("`<function=get_weather`", "`<function=search`"), "<function=delete>", 10),
        (("`get_weather`",), "get_wether", 0),
        (("`<f=a`", "a JSON value"), "<f=b", 0),
    ],
)
def test_a_failure_moves_past_a_marker_every_expected_literal_shares(
    expected: tuple[str, ...], text: str, moved: int
) -> None:
    offset, wanted = past_shared_start(text, 0, expected)
    assert offset == moved
    if moved:
        assert wanted == tuple(f"`{item[1 + moved:-1]}`" for item in expected)


def test_a_problem_has_a_canonical_json_form() -> None:
    (problem,) = text_and_calls().parse(OUTPUT).problems
    data = problem.to_dict()
    assert data["offset"] == OUTPUT.index("delete")
    assert data["expected"] == ["`get_weather`", "`search`"]
    assert data["message"] == problem.message
