"""Python literals as call arguments (analyzer/generator/python_literals.py).

Python itself is the oracle: a value printed with `repr` (or a literal spelled another way
Python accepts) must come back as what `ast.literal_eval` reads from the same text, one-shot
and streamed in any chunks, through the parser of the Python-call format template.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.analysis.pipeline import analyze
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.python_literals import (
    BAD,
    DONE,
    MORE,
    START,
    PythonLiteralDialect,
    closed,
    jsonable,
    scan,
)
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import accumulate
from analyzer.render.loading import load_template_file

TEMPLATE = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats" / \
    "tools_python_call.jinja"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"a": {}, "b": {"type": "integer"}}}}}]
_PARSER: list[GeneratedParser] = []


def parser() -> GeneratedParser:
    if not _PARSER:
        analysis = analyze(load_template_file(TEMPLATE))
        _PARSER.append(generate_parser(analysis, ParseOptions.make(tools=TOOLS)))
    return _PARSER[0]


def output_with(text: str) -> str:
    """A call whose first argument is written as text, followed by another argument."""
    return f"<|tool_call_start|>[f(a={text}, b=7)]<|tool_call_end|>"


def first_argument(output: str, chunk: int = 0) -> Any:
    if chunk:
        stream = parser().stream()
        deltas = [d for at in range(0, len(output), chunk)
                  for d in stream.feed(output[at:at + chunk])]
        message = accumulate(deltas + stream.finish())
    else:
        message = parser().parse(output)
    assert message.content == "", message.content
    (call,) = message.tool_calls
    arguments = json.loads(call.arguments)
    assert arguments["b"] == 7
    return arguments["a"]


PYTHON_SPELLINGS = [
    "1_000", ".5", "1.", "+2", "-0.25e-3", "(1, 2)", "['a',]", "{1: 'one'}", "'a' 'b'",
    "r'C:\\dir\\n'", "'''it's \"triple\"'''", "u'x'", "b'bytes'", "'\\x41\\u00e9\\n'",
    "'a, b) c] }'", '"say \\"hi\\", it\'s"', "{'k': [None, True, False, {}, []]}", "[]", "{}",
    "''", '""', "( 3 )",
]


@pytest.mark.parametrize("text", PYTHON_SPELLINGS)
@pytest.mark.parametrize("chunk", [0, 1, 3])
def test_a_literal_reads_as_python_reads_it(text: str, chunk: int) -> None:
    assert first_argument(output_with(text), chunk) == jsonable(ast.literal_eval(text))


@pytest.mark.parametrize(("text", "expected"), [
    ('{"k": true, "n": null, "s": "x"}', {"k": True, "n": None, "s": "x"}),
    ("[false, 'true']", [False, "true"]),
    ("'two\nlines'", "two\nlines"),  # a raw newline inside quotes, as some templates write
])
def test_json_spelling_and_raw_newlines_are_read(text: str, expected: Any) -> None:
    assert first_argument(output_with(text)) == expected
    assert first_argument(output_with(text), 1) == expected


@pytest.mark.parametrize("text", ["Paris", "some words", "f(x)", "1 +"])
def test_text_that_is_no_literal_stays_a_string_as_written(text: str) -> None:
    assert first_argument(output_with(text)) == text
    assert first_argument(output_with(text), 2) == text


python_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(value=python_values, chunk=st.integers(min_value=0, max_value=5))
def test_any_value_python_prints_comes_back(value: Any, chunk: int) -> None:
    assert first_argument(output_with(repr(value)), chunk) == value


def test_the_scan_stops_at_the_comma_or_parenthesis_outside_brackets_and_strings() -> None:
    text = "[1, ')'], {'a': (2, 3)}) rest"
    assert scan(text, 0, START, final=True)[:2] == (DONE, text.index(", {"))
    assert scan(text, 9, START, final=True)[:2] == (DONE, text.index(") rest"))


def test_the_scan_asks_for_more_inside_a_string_or_bracket_and_refuses_a_mismatch() -> None:
    assert scan("['a, b", 0, START, final=False)[0] == MORE
    assert scan("[1, 2", 0, START, final=True)[0] == MORE
    assert scan("[1, 2}", 0, START, final=True)[:2] == (BAD, 5)


def test_a_value_that_has_no_json_form_stays_text() -> None:
    assert PythonLiteralDialect().to_json("1j") == '"1j"'
    assert PythonLiteralDialect().to_json("[" * 5000 + "]" * 5000).startswith('"[[[')


def test_a_scan_resumed_at_the_end_of_the_text_keeps_its_string_open() -> None:
    # A stream resumes the scan where the last chunk ended: inside a string it must stay
    # inside (it forgot the quote, so a stream took `'Paris` as a whole value at its end).
    status, end, state = scan("'Paris", 0, START, final=False)
    assert (status, end, state.quote) == (MORE, 6, "'")
    assert scan("'Paris", 6, state, final=True)[2].quote == "'"


@pytest.mark.parametrize(("cut", "expected"), [
    ("'Paris", "Paris"), ("['a', {'b': 'c", ["a", {"b": "c"}]), ("'Pa\\", "Pa"),
    ("(1, 2", [1, 2]),
])
def test_a_value_cut_off_at_the_end_of_the_output_is_healed_alike_in_every_reading(
        cut: str, expected: Any) -> None:
    # Max tokens: the call is kept with the value read so far, closed as JSON arguments
    # are healed, and the break is noted; one-shot and streamed in any chunks alike.
    output = f"<|tool_call_start|>[f(b=7, a={cut}"
    for chunk in (0, 1, 3, len(output)):
        if chunk:
            stream = parser().stream()
            deltas = [d for at in range(0, len(output), chunk)
                      for d in stream.feed(output[at:at + chunk])]
            message = accumulate(deltas + stream.finish())
            kinds = [str(d.kind) for d in stream.deviations]
        else:
            report = parser().parse_report(output)
            message, kinds = report.message, [str(d.kind) for d in report.deviations]
        (call,) = message.tool_calls
        assert json.loads(call.arguments) == {"b": 7, "a": expected}, chunk
        assert kinds == ["malformed_call"], chunk
        assert message.content.strip("\\") == "", chunk


def test_a_whole_value_is_not_changed_by_the_healing() -> None:
    assert closed("'it''s'") == "'it''s'" and closed("[1, (2,)]") == "[1, (2,)]"
