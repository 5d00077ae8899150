"""Resume points are kept one object per structure (peg/expressions.py, RESUMES_KEPT): runs
that stop in the same place, in kind, leave the same expression, so a stream that resumes
from it and stops there again is given back the very expression it ran (nothing rebuilt)."""

from __future__ import annotations

import pytest

from analyzer import peg as p
from analyzer.peg import PegParseError
from analyzer.peg.expressions import (
    _SEQUENCES,
    RESUMES_KEPT,
    Choice,
    forget_resume_points,
    resumed_sequence,
)
from analyzer.peg.parser import run


@pytest.fixture(autouse=True)
def empty_tables() -> None:
    """Each test starts with empty tables: a table that other tests' streams fill up between
    a test's two runs starts over, and the second run builds a new (equal) object."""
    forget_resume_points()


def parameters() -> p.Parser:
    """`<f>` then parameters `<p=NAME>VALUE</p>`, in named rules, as a call's arguments."""
    value = p.Rule("value", p.capture(p.Role.ARG_STRING_VALUE, p.until("</p>")))
    parameter = p.Rule("parameter", p.literal("<p=") + p.capture(p.Role.ARG_NAME, p.until(">"))
                       + p.literal(">") + p.commit() + value + p.literal("</p>"))
    call = p.Rule("call", p.tool(p.literal("<f>") + p.commit() + p.zero_or_more(parameter)
                                 + p.literal("</f>")))
    return p.Parser(p.content(p.until("<f>")) + p.optional(call))


def resume_after(parser: p.Parser, text: str) -> p.Expr:
    """The expression a stream would resume from after a run over text."""
    outcome = run(parser.start, text, 0, partial=True)
    assert outcome.needs_more and isinstance(outcome.state.resume, p.Expr)
    return outcome.state.resume


def test_runs_that_stop_in_the_same_value_leave_the_same_resume_point() -> None:
    parser = parameters()
    first = resume_after(parser, "<f><p=a>some text")
    assert resume_after(parser, "<f><p=b>other text, longer") is first


def test_runs_that_stop_between_parameters_leave_the_same_resume_point() -> None:
    parser = parameters()
    first = resume_after(parser, "<f><p=a>x</p>")
    assert resume_after(parser, "<f><p=a>x</p><p=b>y</p>") is first


def test_a_run_from_a_kept_resume_point_that_stops_again_there_gives_it_back() -> None:
    parser = parameters()
    between = resume_after(parser, "<f><p=a>x</p>")
    again = run(between, "<p=b>y</p>", 0, partial=True)
    assert again.needs_more and again.state.resume is between


def test_a_resumed_run_that_fails_still_names_its_rules() -> None:
    parser = parameters()
    in_value = resume_after(parser, "<f><p=a>x")
    try:
        run(in_value, "y</p><q>", 0, partial=True)
    except PegParseError as error:
        assert error.rule == "call"  # the trace's rule stack survives the kept scopes
    else:
        raise AssertionError("`<q>` is not a parameter nor `</f>`")


def test_a_choice_narrowed_the_same_way_twice_is_the_same_choice() -> None:
    # `<a>` is out after `<b`, `<bc>` and `<bd>x` are both still possible
    choice = p.choice(p.literal("<a>"), p.literal("<bc>") + p.content(p.rest()),
                      p.literal("<b") + p.content(p.rest()))
    assert isinstance(choice, Choice)
    parser = p.Parser(choice)
    first = run(parser.start, "<b", 0, partial=True).state.resume
    second = run(parser.start, "<b", 0, partial=True).state.resume
    assert first is second


def test_the_kept_sequences_never_exceed_their_bound() -> None:
    leaves = [p.literal(str(number)) for number in range(RESUMES_KEPT + 10)]
    for leaf in leaves:
        resumed_sequence((leaf, leaf))
    assert 0 < len(_SEQUENCES) <= RESUMES_KEPT
    assert resumed_sequence((leaves[-1], leaves[-1])) is resumed_sequence((leaves[-1], leaves[-1]))
