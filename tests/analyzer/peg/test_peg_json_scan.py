"""The resumable JSON scanner's flat runs: one regex for a run of tokens that open and close
nothing, stopping where the token loop stops."""

from __future__ import annotations

import random

import pytest

from analyzer.peg.json_scan import (
    COMMA_OR_CLOSE,
    FLAT,
    INCOMPLETE,
    INITIAL,
    KEY,
    STRICT,
    VALUE,
    Scanner,
    ScanState,
)

# The token loop alone: a strict scanner without flat runs.
LOOP = Scanner(python=False)

# Values whose prefixes and resumes stop everywhere a scan can: inside keys and strings
# (escapes whole, cut, invalid), numbers that may grow or end badly, words whole and cut,
# nesting, whitespace of every kind, a raw control character, tokens out of place.
SEEDS = (
    '{"location": "Seoul, South Korea", "unit": "celsius", "days": 5}',
    '{"q": "a\\"b\\\\c\\n\\u00e9", "n": [12, -3.5e2, 0, 1E+7], "ok": true, "no": null}',
    '{ "a" :\t[ {"b": false} , [] , {} ],\n  "c": "x"  }',
    '{"k": 01, "j": 1., "m": -, "e": 1e}',
    '{"bad": "x\\qy", "ctl": "a\x01b", "w": tru, "v": nulx}',
    '{"a": 1 "b": 2, "c" 3, : 4,, "d": [1 2], "e": {"f"}}',
    '[1, "two", [true, {"x": [null]}], -0.5, "\\ud83d\\ude00"]',
)


def outcomes_agree(text: str, state: ScanState) -> None:
    flat, loop = STRICT.scan(text, 0, state, False), LOOP.scan(text, 0, state, False)
    assert flat == loop, (text, state)


def every_prefix_and_resume(value: str) -> None:
    for cut in range(len(value) + 1):
        outcomes_agree(value[:cut], INITIAL)
        stopped = LOOP.scan(value[:cut], 0, INITIAL, False)
        if stopped.status != INCOMPLETE:
            continue
        for end in range(stopped.pos, len(value) + 1):
            outcomes_agree(value[stopped.pos : end], stopped.state)


@pytest.mark.parametrize("value", SEEDS)
def test_a_flat_run_stops_where_the_token_loop_stops(value: str) -> None:
    every_prefix_and_resume(value)


def test_flat_runs_agree_with_the_token_loop_on_mutated_values() -> None:
    rng = random.Random(11)
    for _ in range(80):
        value = rng.choice(SEEDS)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(value))
            put = rng.choice('{}[],:" \\5-.etrunx\x02')
            value = value[:at] + put + value[at + rng.randint(0, 1) :]
        every_prefix_and_resume(value)


@pytest.mark.parametrize(
    ("text", "state", "want"),
    [
        (', "unit": "cels', ScanState("{", COMMA_OR_CLOSE), ScanState("{", VALUE, '"', False)),
        ('", "max_results":'[1:], ScanState("{", COMMA_OR_CLOSE), ScanState("{", VALUE)),
        (' 23, "include_hi', ScanState("{", VALUE), ScanState("{", KEY, '"', True)),
        ('"a", 1, true, "b', ScanState("{[", VALUE), ScanState("{[", VALUE, '"', False)),
    ],
)
def test_a_flat_run_reads_a_chunk_of_members_in_one_match(
        text: str, state: ScanState, want: ScanState) -> None:
    pattern, ends = FLAT[state.stack[-1]][state.expect]
    found = pattern.match(text)
    assert found.end() == len(text)
    assert ends[found.lastindex][0] == want.expect
    assert STRICT.scan(text, 0, state, False)[1:3] == (len(text), want)
