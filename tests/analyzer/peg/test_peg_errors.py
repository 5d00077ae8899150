"""Parse traces: which rule failed where, what was expected and found, with a caret."""

from __future__ import annotations

import pytest

from analyzer import peg as p
from analyzer.errors import AnalyzerError
from analyzer.peg import PegParseError


def hermes_like() -> p.Parser:
    call = p.rule(
        "tool-call",
        p.tool(
            p.literal("<tool_call>")
            + p.commit()
            + p.space()
            + p.tool_args(p.json_value())
            + p.space()
            + p.literal("</tool_call>")
        ),
    )
    return p.Parser(p.content(p.until("<tool_call>")) + p.zero_or_more(call + p.space()))


def test_error_names_expected_marker_offset_and_what_was_found() -> None:
    text = 'Sure.\n<tool_call>\n{"a": 1}\n<|im_end|>'
    with pytest.raises(PegParseError) as caught:
        hermes_like().parse(text)
    error = caught.value
    offset = text.index("<|im_end|>")
    assert error.offset == offset
    assert (error.line, error.column) == (4, 1)
    assert str(error).splitlines()[0] == (
        f"expected `</tool_call>` at offset {offset} (line 4, column 1) "
        "in rule `tool-call`, found `<|im_end|>`"
    )


def test_error_shows_the_line_with_a_caret_under_the_column() -> None:
    with pytest.raises(PegParseError) as caught:
        hermes_like().parse('<tool_call>{"a": 1} oops')
    lines = str(caught.value).splitlines()
    assert lines[1] == '<tool_call>{"a": 1} oops'
    assert lines[2] == " " * lines[1].index("oops") + "^"


def test_error_inside_json_says_what_the_json_needed() -> None:
    with pytest.raises(PegParseError, match=r"expected `:` at offset 16 .*found `1}</tool_c"):
        hermes_like().parse('<tool_call>{"a" 1}</tool_call>')


def test_error_at_end_of_input_says_so() -> None:
    with pytest.raises(PegParseError, match="found end of input"):
        hermes_like().parse('<tool_call>{"a": 1}')


def test_error_lists_every_alternative_expected_at_the_farthest_point() -> None:
    parser = p.Parser(p.literal("<") + p.commit() + p.tool_name(p.literals(["ab", "cd"])))
    with pytest.raises(PegParseError, match="expected `ab` or `cd` at offset 1"):
        parser.parse("<xy")


def test_parse_error_is_an_analyzer_error() -> None:
    assert issubclass(PegParseError, AnalyzerError)


def test_long_lines_are_windowed_around_the_offset() -> None:
    text = "x" * 200 + "!"
    with pytest.raises(PegParseError) as caught:
        p.Parser(p.literal("x" * 200) + p.literal("?")).parse(text)
    context, caret = str(caught.value).splitlines()[1:3]
    assert context.startswith("...") and len(context) < 80
    assert context[caret.index("^")] == "!"


def test_a_failure_inside_a_negative_lookahead_that_holds_is_not_the_error() -> None:
    # `!("<" "ab")` holds on `<x`: its item failing at offset 1 is the lookahead's success.
    # The error is the literal after it, at 0: a run resumed past the lookahead (a stream's)
    # fails there too.
    parser = p.Parser(p.not_followed_by(p.literal("<") + p.literal("ab")) + p.literal("<c"))
    with pytest.raises(PegParseError, match="expected `<c` at offset 0"):
        parser.parse("<x")
