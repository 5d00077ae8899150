"""A whole parse that records no failures finds where JSON arguments followed by a marker end
by the marker and one strict check of the text up to it (`object_end`), instead of decoding
them with the json scanner. It must end where the scanner ends, or leave the object to it:
on every corpus template whose arguments a marker follows, its rendering of a call with the
arguments replaced by valid and broken JSON (escapes, the marker inside a string, whitespace
before the marker, NaN, lone surrogates, long integers, deep nesting), and that rendering
departed from, run with the shortcut and without it (and traced: the general path)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from rendered_calls import generated_call_or_skip, template_paths, whole_outcome
from test_whole_dispatch_corpus import departures

from analyzer.generator import arguments
from analyzer.generator.arguments import ByFirstCharacter, object_end
from analyzer.peg import Expr
from analyzer.peg.json_values import NO_VALUE, SCAN_ONCE

END = "<|tool_call_end|>"

# Argument texts: what the shortcut takes, and what it must leave to the scanner.
OBJECTS = [
    '{}', '{"a": 1}', '{"a":1}', ' {"a": 1}', '{"a": 1} ', '{"a": 1}\n\t \r',
    '{"a": 1}\x0c', '{"a": [1, 2, {"b": null}], "c": true, "d": -0.5e+3}',
    '{"a": "x\\"}y"}', '{"a": "caf\u00e9 \U0001f600 \\u00e9 \\ud83d\\ude00"}',
    '{"a": "' + END + '"}', '{"a": "' + END + '", "b": 2}', '{"a": "x\\ny\\\\"}',
    '{"a": NaN}', '{"a": Infinity}', '{"a": "\\ud800"}', '{"a": "\ud800"}', '{"a": 01}',
    '{"a": 1,}', '{"a" 1}', '{"a": "x\ty"}', '{"a": "\\q"}', '{"a": tru}', '{"a": 1.}',
    '{"a": 1}}', '{"a": 1} x', '{"a": 1', '{"a": "unclosed}', '{"a": 1}{"b": 2}',
    '{"a": ' + "7" * 5000 + '}', '{"a": ' + "7" * 4000 + '}', '{"a": 1e999}',
    '{"a": ' + "[" * 300 + "]" * 300 + '}', '{"a": ' + "[" * 2000 + "]" * 2000 + '}',
    '{"a": "' + "[" * 600 + '"}', '{"a": ["' + "x" * 3000 + '"]}', '{"a": "\x7f\u2028"}',
]


def scanner_end(text: str, pos: int) -> int:
    try:
        return int(SCAN_ONCE(text, pos)[1])
    except NO_VALUE:
        return -1
    except RecursionError:
        return -2


@pytest.mark.parametrize("value", OBJECTS, ids=range(len(OBJECTS)))
def test_an_object_end_is_the_scanners_or_none(value: str) -> None:
    for text in (value + END, "x:" + value + END, value + " " + END, value, value + END + "}"):
        pos = text.index("{") if "{" in text else 0
        found = object_end(text, pos, END)
        assert found == -1 or found == scanner_end(text, pos), text


def test_plain_objects_take_the_shortcut() -> None:
    # Where the shortcut never fires, the corpus test below compares the scanner with itself.
    for value in ('{"a": 1}', '{"a": 1}\n ', '{"b": [1, "caf\u00e9"]}'):
        text = "call:" + value + END
        assert object_end(text, 5, END) == 5 + len(value.rstrip()), value


def test_nesting_near_the_recursion_limit_is_left_to_the_scanner() -> None:
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(120)
        for depth in range(20, 130):
            text = '{"a":' * depth + "1" + "}" * depth + END
            found = object_end(text, 0, END)
            assert found == -1 or found == scanner_end(text, 0), depth
    finally:
        sys.setrecursionlimit(limit)


ARGUMENTS = re.compile(r'\{[^{}]*"hotels"[^{}]*\}')


def outputs(rendering: str, follower: str) -> list[str]:
    """The rendering, departed from, and with other arguments in place of its own."""
    found = departures(rendering)
    at = ARGUMENTS.search(rendering)
    if at is not None:
        for value in OBJECTS + [value.replace(END, follower) for value in OBJECTS]:
            found.append(rendering[: at.start()] + value + rendering[at.end() :])
        found.append(rendering[: at.end()] + " \n" + rendering[at.end() :])
    return found


def follower_of(start: Expr) -> str:
    """The marker that follows the grammar's JSON arguments ("" where none does)."""
    pending, seen = [start], set()
    while pending:
        expr = pending.pop()
        if id(expr) in seen:
            continue
        seen.add(id(expr))
        if isinstance(expr, ByFirstCharacter) and expr.follower:
            return expr.follower
        pending.extend(expr.children())
    return ""


def outcome(start: Expr, text: str, traced: bool) -> object:
    """whole_outcome, or the error (the scanner runs out of recursion on deep nesting)."""
    try:
        return whole_outcome(start, text, traced)
    except RecursionError:
        return RecursionError


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_argument_ends_by_their_marker_equal_the_scanners(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    start = parser.parser.start
    follower = follower_of(start)
    if not follower:
        pytest.skip("no JSON arguments a marker follows")
    assert ARGUMENTS.search(rendering), "the rendering holds the call's arguments"
    for output in outputs(rendering, follower):
        text = parser.prompt.tail + output
        fast = outcome(start, text, False)
        with monkeypatch.context() as patched:
            patched.setattr(arguments, "object_end", lambda text, pos, follower: -1)
            scanned = outcome(start, text, False)
        assert fast == scanned, output
        assert fast == outcome(start, text, True), output


def test_the_arguments_json_is_what_the_check_reads() -> None:
    # The check reads JSON as the scanner does: a value it accepts decodes alike.
    for value in OBJECTS:
        end = object_end(value + END, 0, END) if value.startswith("{") else -1
        if end >= 0:
            assert json.loads(value[:end]) == SCAN_ONCE(value, 0)[0], value
