"""A state a stream keeps from run to run (`MatchState.rerun`): each run leaves it exactly as a
state built for that run would be left, whatever the run before left in it (events, a held
choice's shakiness, a hold's uncertain events, the leaf, the resume point)."""

from __future__ import annotations

from itertools import product

from analyzer import peg as p
from analyzer.peg.parser import matched
from analyzer.peg.state import FAIL, MatchState

# Every field of a state: one added to MatchState later is compared too, so a reset that
# forgets it fails here.
FIELDS = MatchState.__slots__


def grammar() -> p.Expr:
    """Calls with named arguments held open by a choice (a shaky one at `<p=al`), content
    around them: runs that leave events, holds, waiting leaves and failures behind."""
    value = p.content(p.until("</p>"))
    argument = p.choice(p.literal("<p=alpha>") + value, p.literal("<p=alz>") + value,
                        p.literal("<p=al") + p.regex("[a-z]+") + value) + p.literal("</p>")
    call = p.literal("<call>") + p.repeat(argument) + p.literal("</call>")
    return p.content(p.until("<call>")) + p.repeat(call) + p.content(p.until("<call>"))


TEXTS = ("", "Hi <ca", "Hi <call><p=al", "Hi <call><p=alpha>x", "<call><p=alz>1</p></call>",
         "<call><p=alq>2</p></call> done", "<call><q>", "<call><p=alpha>v</p><p=al")


def fields(state: MatchState) -> tuple[object, ...]:
    return tuple(getattr(state, name) for name in FIELDS)


def test_a_state_run_again_ends_as_a_new_state_does_after_any_run_before() -> None:
    expr, kept = grammar(), MatchState("", True, traced=False)
    for before, text in product(TEXTS, TEXTS):
        for partial in (True, False):
            if matched_or_none(expr, before, partial) is not None:
                kept.rerun(expr, before, partial, None, 7)
            outcome = kept.rerun(expr, text, partial, None, 3)
            fresh = matched_or_none(expr, text, partial)
            if fresh is None:
                assert outcome == FAIL, (before, text, partial)
                continue
            state, expected = fresh
            assert outcome == expected, (before, text, partial)
            assert fields(kept) == fields(state), (before, text, partial)
            assert (kept.base, kept.text) == (3, text)


def matched_or_none(expr: p.Expr, text: str, partial: bool) -> tuple[MatchState, int] | None:
    """A fresh state's run (None when it fails)."""
    try:
        return matched(expr, text, 0, partial, (3, 1, 1), None)
    except p.PegParseError:
        return None
