"""JSON values: strict and python-dict flavours, partial values, schema-typed values."""

from __future__ import annotations

import ast
import json
import re

import pytest

from analyzer import peg as p
from analyzer.peg import PegParseError, Role
from analyzer.peg.captures import Capture, StringCapture, capture_of
from analyzer.peg.json_scan import (
    COMPLETE,
    INCOMPLETE,
    INITIAL,
    INVALID,
    PYTHON,
    STRICT,
    ScanState,
)
from analyzer.peg.json_values import (
    PYTHON_TOKEN,
    PYTHON_WORDS,
    RAW_CONTROLS,
    STRING,
    JsonContinue,
    JsonString,
)
from analyzer.peg.state import MatchState


def value_span(expr: p.Expr, text: str, partial: bool = False) -> str:
    result = p.Parser(p.tool_args(expr) + p.rest()).parse(text, partial)
    return "".join(c.text for c in result.by_role(Role.TOOL_ARGS))


def test_strict_json_value_spans_exactly_one_value() -> None:
    assert value_span(p.json_value(), '{"a": [1, "x\\"y"]} tail') == '{"a": [1, "x\\"y"]}'


def test_strict_json_rejects_single_quotes() -> None:
    with pytest.raises(PegParseError):
        p.Parser(p.json_value()).parse("{'a': 1}")


def test_python_flavour_accepts_single_quotes_and_python_constants() -> None:
    text = "{'a': True, 'b': None, \"c\": 'it\\'s'} tail"
    assert value_span(p.json_value(python=True), text) == text[: -len(" tail")]


def test_normalize_python_json_rewrites_quotes_and_constants() -> None:
    text = "{'a': True, 'b': [None, False], 'q': 'say \"hi\"', 'e': 'it\\'s'}"
    expected = '{"a": true, "b": [null, false], "q": "say \\"hi\\"", "e": "it\'s"}'
    assert p.normalize_python_json(text) == expected


def literal_eval_json(text: str) -> str:
    """What normalize_python_json gave before its shortcut: every quoted token compiled."""

    def rewrite(token: re.Match[str]) -> str:
        word = token.group()
        if word in PYTHON_WORDS:
            return PYTHON_WORDS[word]
        if word.startswith('"') and STRING.fullmatch(word):
            return word
        return json.dumps(ast.literal_eval(word.translate(RAW_CONTROLS)), ensure_ascii=False)

    return PYTHON_TOKEN.sub(rewrite, text)


@pytest.mark.parametrize("inner", [
    "", "plain", ".cpp", 'say "hi"', "café 日本語 \U0001f600", r"tab\there", r"it\'s",
    r"back\\slash", r"raw\nnewline escape", r"a\u00e9", r"\x41", "two\\", r"\N{BULLET}",
    r"raw\ttab", r"nbsp\xa0", r"ctrl\x0b", r"line\u2028sep", r"nul\x00",
])
def test_normalize_python_json_reads_quoted_text_as_literal_eval_does(inner: str) -> None:
    # The inner texts are written with Python escapes; decoded, they hold raw controls too.
    for text in (inner, inner.encode().decode("unicode_escape", "ignore")):
        for quoted in (f"['{text}', 1]", f'["{text}"]', f"{{'k': '{text}'}}"):
            try:
                expected = literal_eval_json(quoted)
            except (ValueError, SyntaxError) as error:
                with pytest.raises(type(error)):
                    p.normalize_python_json(quoted)
                continue
            assert p.normalize_python_json(quoted) == expected


@pytest.mark.parametrize(
    "text",
    ['{"a": "x', '{"a": [1, 2', '{"a": tr', '{"a": "\\', '{"a": "\\u00', '[{"b": {}}, ', '{"k'],
)
def test_scanner_reports_unfinished_values_as_incomplete(text: str) -> None:
    assert STRICT.scan(text, 0, INITIAL, final=False).status == INCOMPLETE


@pytest.mark.parametrize("text", ['{"a" 1}', '{"a": x}', "[1,,2]", '{"a": "\\q"}', '{"a": "\x01"}'])
def test_scanner_reports_malformed_values_as_invalid(text: str) -> None:
    assert STRICT.scan(text, 0, INITIAL, final=False).status == INVALID


def test_scanner_resumes_where_the_previous_chunk_stopped() -> None:
    whole = '{"a": "hello", "b": [1, 2.5, true]}'
    outcome = STRICT.scan(whole[:9], 0, INITIAL, final=False)
    assert outcome.status == INCOMPLETE
    rest = STRICT.scan(
        whole[: outcome.pos] + whole[outcome.pos :], outcome.pos, outcome.state, final=True
    )
    assert (rest.status, rest.pos) == (COMPLETE, len(whole))


def test_python_scanner_accepts_mixed_quotes() -> None:
    text = "{'a': \"b\", 'c': False}"
    outcome = PYTHON.scan(text, 0, INITIAL, final=True)
    assert (outcome.status, outcome.pos) == (COMPLETE, len(text))


def test_json_string_matches_one_quoted_string() -> None:
    parser = p.Parser(p.call_id(p.json_string()) + p.rest())
    assert parser.parse('"call_1" rest').captures[0].text == '"call_1"'


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "integer"}, "42", "4.5"),
        ({"type": "number"}, "4.5", '"4.5"'),
        ({"type": "boolean"}, "true", "1"),
        ({"type": "array"}, "[1]", "{}"),
        ({"type": "object"}, '{"a": 1}', "[]"),
        ({"enum": ["celsius", "fahrenheit"]}, '"celsius"', '"kelvin"'),
        ({"type": ["integer", "null"]}, "null", '"x"'),
    ],
)
def test_schema_value_accepts_only_values_of_the_schema(
    schema: dict[str, object], good: str, bad: str
) -> None:
    parser = p.Parser(p.schema_value(schema))
    assert parser.parse(good).complete
    with pytest.raises(PegParseError, match="a value of schema"):
        parser.parse(bad)


def test_schema_value_python_flavour_accepts_capitalised_booleans() -> None:
    assert p.Parser(p.schema_value({"type": "boolean"}, python=True)).parse("True").complete


def test_conforms_checks_anyof_alternatives() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert p.conforms(3, schema)
    assert not p.conforms(3.5, schema)


STRINGS = ['"id"', '"call_0001"', '""', '"a\\"b"', '"\\u00e9t\\u00e9"', '"tab\\there"',
           '"caf\u00e9"', '"unclosed', '"bad\\x"', '"raw\ncontrol"', "'single'", "7", "", '"',
           '"a" tail']


@pytest.mark.parametrize("text", STRINGS)
def test_a_captured_json_string_matches_as_its_capture_would(text: str) -> None:
    # capture_of reads a whole JSON string in one step (a call id at every call): the same
    # end, events, waits and failures as the capture around the string expression.
    fast = capture_of(Role.CALL_ID, JsonString())
    assert type(fast) is StringCapture
    general = Capture(Role.CALL_ID, JsonString())
    for partial in (False, True):
        for traced in (False, True):
            states = [MatchState(text, partial, traced=traced) for _ in range(2)]
            ends = [expr.match(st, 0) for expr, st in zip((fast, general), states, strict=True)]
            assert ends[0] == ends[1], (partial, traced)
            assert states[0].events == states[1].events
            assert (states[0].fail_pos, states[0].expected) == (states[1].fail_pos,
                                                                states[1].expected)
            assert states[0].need_end == states[1].need_end


# Values with escapes of every kind, cut anywhere: a stream's chunk may end inside an escape
# (a lone backslash, half a \u escape), after one, or in a key, a number or a word.
READ_ON_VALUES = (
    (
        False,
        '{"code": "print(\\"a\\\\b\\")\\n\\t\\u00e9\\ud83d\\ude00", "n": [12, -3.5e2], "ok": true}',
    ),
    (False, '{"bad": "x\\qy", "ctl": "a\x01b"}'),
    (True, "{'code': 'it\\'s \\\\ \"q\"', 'n': [1, None], \"b\": False}"),
)


def scanned_on(python: bool, state: ScanState, text: str) -> tuple[int, ScanState | None]:
    """What a run would do from state over text: where it resumes and in what state."""
    outcome = (PYTHON if python else STRICT).scan(text, 0, state, final=False)
    return (outcome.pos, outcome.state) if outcome.status == INCOMPLETE else (-1, None)


@pytest.mark.parametrize(("python", "value"), READ_ON_VALUES)
def test_a_json_value_read_on_stops_where_its_scan_would(python: bool, value: str) -> None:
    for cut in range(1, len(value)):
        outcome = (PYTHON if python else STRICT).scan(value[:cut], 0, INITIAL, final=False)
        if outcome.status != INCOMPLETE:
            continue
        leaf = JsonContinue(python, outcome.state)
        rest = value[outcome.pos :]
        for end in range(len(rest) + 1):
            text = rest[:end]
            at, moved = leaf.read_on(text)
            want_at, want_state = scanned_on(python, outcome.state, text)
            assert at == want_at, (value[:cut], text)
            if at >= 0:
                assert isinstance(moved, JsonContinue) and moved.state == want_state
                assert (moved is leaf) == (want_state == outcome.state), (value[:cut], text)


def matched_from(leaf: JsonContinue, text: str) -> tuple[int, object, int, object]:
    """A stream run's match of leaf at the start of text: end, resume state, need end, and
    the failure."""
    st = MatchState(text, partial=True, traced=True)
    end = leaf.match(st, 0)
    resumed = st.resume.state if isinstance(st.resume, JsonContinue) else st.resume
    return end, resumed, st.need_end, (st.fail_pos, st.expected)


@pytest.mark.parametrize(("python", "value"), READ_ON_VALUES)
def test_a_run_after_a_read_on_that_ends_the_value_matches_as_a_fresh_scan(
        python: bool, value: str) -> None:
    # A read_on that finds the value ended (or broken) keeps its scan for the run that follows
    # on the same text; that run, and a run on any other text, match as a fresh leaf does.
    for cut in range(1, len(value)):
        outcome = (PYTHON if python else STRICT).scan(value[:cut], 0, INITIAL, final=False)
        if outcome.status != INCOMPLETE:
            continue
        rest = value[outcome.pos :] + " <end>"
        for end in range(len(rest) + 1):
            text = rest[:end]
            leaf = JsonContinue(python, outcome.state)
            if leaf.read_on(text)[0] >= 0:
                continue
            fresh = matched_from(JsonContinue(python, outcome.state), text)
            other = text[:-1]  # a text the scan would read otherwise
            assert matched_from(leaf, other) == matched_from(
                JsonContinue(python, outcome.state), other), (value[:cut], text)
            assert matched_from(leaf, text) == fresh, (value[:cut], text)
