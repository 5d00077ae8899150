"""Tests for analyzer/parsing/deviations.py: where a departure sits, and its JSON."""

from __future__ import annotations

from analyzer import peg as p
from analyzer.parsing.deviations import (
    Deviation,
    DeviationAction,
    DeviationKind,
    collected,
    deviation_at,
    in_output,
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


def test_problems_fold_into_malformed_calls_kept_as_content_in_output_order() -> None:
    head = p.literal("<f>") + p.literal("(name)")
    noted = p.noted(p.literal("</s>"), "trailing_eos", "dropped", "end of output")
    grammar = p.Parser(p.content(p.until("<f>", "</s>"))
                       + p.zero_or_more(p.choice(p.kept_as_text(p.content(p.literal("<f>")), head),
                                                 noted) + p.content(p.until("<f>", "</s>"))))
    result = grammar.parse("x<f>nope</s>")
    deviations = collected(result.problems, result.notices)
    assert [(d.kind, d.action, d.offset) for d in deviations] == [
        (DeviationKind.MALFORMED_CALL, DeviationAction.KEPT_AS_CONTENT, 4),
        (DeviationKind.TRAILING_EOS, DeviationAction.DROPPED, 8)]
    assert deviations[0].expected == "`(name)`" and deviations[0].found == "`nope</s>`"
    moved = in_output(deviations, "x<f>")
    assert [(d.offset, d.column) for d in moved] == [(0, 1), (4, 5)]


def test_a_failure_where_only_function_names_fit_is_an_unknown_function() -> None:
    head = p.literal("<f>") + p.literals(["get_weather", "search"])
    grammar = p.Parser(p.content(p.until("<f>")) + p.zero_or_more(
        p.kept_as_text(p.content(p.literal("<f>")), head) + p.content(p.until("<f>"))))
    result = grammar.parse("<f>delete_all")
    [deviation] = collected(result.problems, result.notices)
    assert (deviation.kind, deviation.action) == (DeviationKind.UNKNOWN_FUNCTION,
                                                  DeviationAction.KEPT_AS_CONTENT)
    assert deviation.expected == "`get_weather` or `search`"
