"""A choice held open on partial input (Choice.hold_unless_decided): the run resumes from the
alternatives the text has not ruled out, in their order, and says when more text may still
rule one out (`MatchState.shaky`); a dispatch's choice held so resumes as the dispatch.

The alternatives after the one that waits are found once per choice (Choice.later): these
pin down which of them a held run asks, whatever their position."""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator import build
from analyzer.generator.build import DispatchOrElse, one_of_leading, or_else
from analyzer.peg.expressions import Choice
from analyzer.peg.parser import run
from analyzer.peg.state import NEED, MatchState


def arguments() -> tuple[p.Expr, ...]:
    """`<p=NAME>` arguments of known names, a shorter name's opening, and any name: the
    shape of a tagged-argument choice (declared names, then an undeclared one)."""
    value = p.content(p.until("</p>"))
    return (p.literal("<p=alpha>") + value, p.literal("<p=beta>") + value,
            p.literal("<p=alz>") + value, p.literal("<p=al") + p.regex("[a-z]+") + value)


def held(expr: p.Expr, text: str) -> MatchState:
    """The state a partial run over text leaves (it must wait for more)."""
    outcome = run(expr, text, 0, partial=True)
    assert outcome.needs_more
    return outcome.state


def test_a_held_choice_keeps_the_alternatives_the_text_has_not_ruled_out() -> None:
    alpha, _, alz, al = alternatives = arguments()
    state = held(p.choice(*alternatives), "<p=al")
    # `<p=beta>` is out for good; `<p=alz>` is still open (shaky); `<p=al` ran and waits
    assert isinstance(state.resume, Choice)
    assert state.resume.alternatives == (alpha, alz, al)
    assert state.shaky


def test_a_held_choice_asks_the_last_alternative_too() -> None:
    alpha, beta, alz, al = arguments()
    choice = p.choice(alpha, beta, al)  # only the last, run, keeps it open
    state = held(choice, "<p=alp")
    assert isinstance(state.resume, Choice)
    assert state.resume.alternatives == (alpha, al)
    assert not held(p.choice(alpha, beta, alz), "<p=alp").shaky  # nothing else open: decided


def test_a_choice_held_by_every_alternative_resumes_as_itself() -> None:
    choice = p.choice(*arguments())
    state = held(choice, "<p=")  # inside every literal prefix
    assert state.resume is choice


def test_a_dispatch_or_else_held_on_its_choice_resumes_as_itself() -> None:
    alpha, beta, _, al = arguments()
    either = or_else(one_of_leading([alpha, beta]), al)
    assert isinstance(either, DispatchOrElse)
    state = held(either, "<p=")  # every alternative still open: the choice holds itself
    assert state.resume is either


def test_a_later_alternative_that_matches_anywhere_is_kept_without_running_it() -> None:
    missing = p.noted(p.eps(), "missing_close", "accepted", "`</p>`")
    assert missing.matches_anywhere() and not p.literal("x").matches_anywhere()
    choice = p.choice(p.literal("</p>"), missing)
    state = held(choice, "</")
    assert state.resume is choice and not state.shaky  # kept: it cannot fail
    assert state.events == []  # its note is not recorded by a choice that holds


def test_a_closing_held_inside_its_marker_waits_on_the_marker_as_its_choice_does() -> None:
    closing = build.closing("</function>")
    assert isinstance(closing, build.Closing) and closing.waiting is not None
    for text in ("\n</fun", "</", "", "  \n"):
        fast, plain = (MatchState(text, partial=True, traced=False) for _ in range(2))
        assert closing.match(fast, 0) == closing.choice.match(plain, 0) == NEED
        assert fast.resume is closing and plain.resume is closing.choice  # as itself
        assert fast.leaf is plain.leaf is closing.waiting  # the marker's leaf waits
        assert [(st.resume_pos, st.need_end, st.commit_events, st.unsafe_from, st.shaky,
                 st.events) for st in (fast, plain)] == [(0, 0, 0, 0, False, [])] * 2
