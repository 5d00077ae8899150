"""Tests for analyzer/parsing/deviations.py: where a departure sits, and its JSON."""

from __future__ import annotations

from analyzer.parsing.deviations import (
    Deviation,
    DeviationAction,
    DeviationKind,
    deviation_at,
    locate,
)


def test_locate_counts_lines_and_columns_from_one_and_draws_a_caret() -> None:
    assert locate("ab\ncdef\ng", 5) == (2, 3, "cdef\n  ^")
    assert locate("abc", 0) == (1, 1, "abc\n^")
    assert locate("abc", 3) == (1, 4, "abc\n   ^")


def test_a_deviation_round_trips_through_its_json_form() -> None:
    deviation = deviation_at("x\n<tool_call>{", 2, DeviationKind.MISSING_CLOSE,
                             DeviationAction.KEPT_AS_CONTENT, "`</tool_call>`", "end of output")
    data = deviation.to_dict()
    assert data["kind"] == "missing_close" and data["action"] == "kept_as_content"
    assert data["line"] == 2 and data["column"] == 1
    assert Deviation.from_dict(data) == deviation


def test_the_message_says_where_what_was_expected_found_and_done() -> None:
    deviation = deviation_at("<think>a", 0, DeviationKind.REPEATED_REASONING_START,
                             DeviationAction.ACCEPTED, "one `<think>`", "`<think><think>`")
    assert deviation.message == (
        "line 1, column 1 (offset 0): repeated_reasoning_start: expected one `<think>`, "
        "found `<think><think>`; accepted")
