"""Stream runs take whole-parse shortcuts only where the outcome is decided (build.LeadRun's
regex, DispatchOrElse's pick, values.TolerantClosing): at every cut of an output, a partial
run with the shortcuts leaves exactly the state the general path leaves (outcome, events,
commits, which events are final, resume point and position, the waiting leaf, the memo of
undecided lookaheads), and a stream gives the same deltas.

Small grammars written here pin where a lead is decided: a literal complete, whitespace or a
lookahead followed by a character that decides it; cut one character short, inside the lead,
or where whitespace or a lookahead may still go on, the items run one by one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from rendered_calls import (
    expressions_in,
    generated_call_or_skip,
    template_paths,
    with_text_and_cut,
)

from analyzer import peg as p
from analyzer.generator import build
from analyzer.generator.build import NAME_END, DispatchOrElse, LeadRun, StandsFor, lead_run
from analyzer.generator.value_ends import Intruders, tolerant_closing
from analyzer.generator.values import PaddedLiteral, TolerantClosing
from analyzer.parsing.stream import StreamParser
from analyzer.peg import Expr, PegParseError, Role
from analyzer.peg.captures import Capture, ToolCapture
from analyzer.peg.expressions import Choice, Repeat, Scope, Sequence, forget_resume_points
from analyzer.peg.notes import Noted
from analyzer.peg.parser import matched
from analyzer.peg.state import MatchState

SIZES = (1, 3, 16)


@contextmanager
def general_paths(start: Expr, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within: stream runs of this grammar take none of the shortcuts (the general path)."""
    dispatches = [expr for expr in expressions_in(start) if isinstance(expr, DispatchOrElse)]
    picked = [dispatch.picked for dispatch in dispatches]
    with monkeypatch.context() as patched:
        patched.setattr(LeadRun, "decided_lead", lambda self, st, pos: None)
        patched.setattr(TolerantClosing, "match", StandsFor.general)
        for dispatch in dispatches:
            dispatch.picked = False
        try:
            yield
        finally:
            for dispatch, was in zip(dispatches, picked, strict=True):
                dispatch.picked = was


def state_after(start: Expr, text: str) -> Any:
    """Everything a partial run from the start of text leaves that a stream reads."""
    memo: dict[Any, Any] = {}
    try:
        st, outcome = matched(start, text, 0, True, (0, 1, 1), memo)
    except PegParseError as error:
        return ("error", error.offset, error.expected)
    return (outcome, list(st.events), st.commits, st.commit_events, shape(st.resume),
            st.resume_pos, st.need_end, st.unsafe_from, shape(st.leaf), st.shaky,
            {(id(key[0]), key[1]): (shape(at[0]), at[1]) for key, at in memo.items()})


def shape(expr: Any) -> Any:
    """What a resume point is made of, down to the grammar's own expressions (by identity);
    a leaf a run made in a new state (a JSON scan's) by what it is, as each run makes its
    own."""
    kind = type(expr)
    if kind is Sequence:
        return ("sequence", *(shape(item) for item in expr.items))
    if kind is Scope:
        return ("scope", expr.names, shape(expr.body))
    if kind is ToolCapture:
        return ("tool", expr.opened, shape(expr.item))
    if kind is Capture:
        return ("capture", expr.role, expr.flags, id(expr.info), shape(expr.item))
    if kind is Repeat:
        return ("repeat", id(expr.item), expr.least, expr.most)
    if kind is Choice:
        return ("choice", *(id(alternative) for alternative in expr.alternatives))
    if kind is Noted:
        return ("noted", id(expr.note), shape(expr.item))
    return (id(expr) if expr in GRAMMAR_OBJECTS else kind.__name__,
            expr.describe() if isinstance(expr, Expr) else expr)


# The expressions of the grammars under test (filled as each test starts).
GRAMMAR_OBJECTS: set[Any] = set()


def stream_shortcut(expr: Expr) -> bool:
    """Tell whether a stream run may take a shortcut at expr."""
    return (isinstance(expr, LeadRun) and expr.margin is not None
            or isinstance(expr, DispatchOrElse | TolerantClosing))


def both_paths(start: Expr, text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The state a partial run leaves with the shortcuts, and by the general path (the
    kept resume points start over first: both runs see the same objects)."""
    if start not in GRAMMAR_OBJECTS:
        GRAMMAR_OBJECTS.clear()
        GRAMMAR_OBJECTS.update(expressions_in(start))
    forget_resume_points()
    fast = state_after(start, text)
    with general_paths(start, monkeypatch):
        general = state_after(start, text)
    return fast, general


@contextmanager
def leads_taken() -> Iterator[list[int]]:
    """Record the end of the text of every partial run where a lead's regex was taken."""
    taken: list[int] = []
    decided = LeadRun.decided_lead

    def spy(self: LeadRun, st: MatchState, pos: int) -> Any:
        found = decided(self, st, pos)
        if found is not None:
            taken.append(st.n)
        return found

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(LeadRun, "decided_lead", spy)
        yield taken


# --- small grammars: where a lead is decided -----------------------------------------------

def argument() -> p.Expr:
    """`<p=` name `>` commit value `</p>`: a lead that ends with a literal."""
    name = p.arg_name(p.literal("unit"))
    value = p.arg_string_value(p.until("</p>"))
    return lead_run(p.literal("<p=") + name + build.spaced(">") + p.commit() + value
                    + p.literal("</p>"))


def call_head() -> p.Expr:
    """name, a name's end (a lookahead), whitespace, `(`...: a lead that ends where
    whitespace may go on and holds a lookahead."""
    name = p.tool_name(p.literal("get"))
    args = p.arg_string_value(p.until(")"))
    return p.tool(lead_run(name + NAME_END + p.space() + p.literal("(") + args
                           + p.literal(")")))


def padded() -> p.Expr:
    """`<v>` then an optional newline: a lead that ends with an optional literal."""
    value = p.arg_string_value(p.until("</v>"))
    return lead_run(p.literal("<v>") + p.optional(p.literal("\n")) + value + p.literal("</v>"))


def test_margins_say_how_far_past_its_match_a_lead_may_have_read() -> None:
    runs = {name: next(e for e in expressions_in(grammar()) if isinstance(e, LeadRun))
            for name, grammar in (("argument", argument), ("call", call_head),
                                  ("padded", padded))}
    assert runs["argument"].margin == 0  # ends with `>`: complete is decided
    assert runs["call"].margin == 1  # whitespace, a one-character lookahead
    assert runs["padded"].margin == 1  # the optional newline's one character
    assert runs["call"].looks and not runs["argument"].looks


@pytest.mark.parametrize(("grammar", "text", "taken"), [
    (argument, "<p=unit>Seo", True),
    (argument, "<p=unit>", True),  # the literal is complete: nothing can change it
    (argument, "<p=unit", False),  # one character short
    (argument, "<p=un", False),  # inside the name
    (argument, "<p=unit  ", False),  # whitespace: `>` may still come
    (call_head, "get (x", True),
    (call_head, "get(x", True),
    (call_head, "get (", False),  # a lookahead's reach counts from the match's end (safe)
    (call_head, "get", False),  # the name's end undecided (`get_weather`?)
    (call_head, "get ", False),  # more whitespace may come
    (call_head, "get_", False),  # the lookahead fails: another name
    (padded, "<v>\nab", True),
    (padded, "<v>a", True),
    (padded, "<v>", False),  # the newline may still come
    (padded, "<v>\n", False),  # the regex's match ends at the end: too near
])
def test_a_stream_run_takes_a_lead_only_where_it_is_decided(
        grammar: Any, text: str, taken: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    start = p.sequence(grammar(), p.rest())
    with leads_taken() as runs:
        fast, general = both_paths(start, text, monkeypatch)
    assert bool(runs) == taken
    assert fast == general


@pytest.mark.parametrize("grammar", [argument, call_head, padded])
def test_every_cut_of_a_small_grammar_leaves_the_general_state(
        grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = {argument: "<p=unit>\nSeoul, Korea\n</p>", call_head: "get  ( a b )",
             padded: "<v>\nx y\n</v>"}
    start = p.sequence(p.zero_or_more(grammar()), p.rest())
    text = texts[grammar] * 2
    with leads_taken() as runs:
        for cut in range(len(text) + 1):
            fast, general = both_paths(start, text[:cut], monkeypatch)
            assert fast == general, (cut, text[:cut])
    assert runs  # the shortcut was taken somewhere


def test_a_lead_with_a_lookahead_goes_the_general_way_when_the_memo_holds_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lead = next(e for e in expressions_in(call_head()) if isinstance(e, LeadRun))
    st = MatchState("get (x", partial=True, memo={("undecided", 0): None}, traced=False)
    assert lead.decided_lead(st, 0) is None
    st = MatchState("get (x", partial=True, memo={}, traced=False)
    assert lead.decided_lead(st, 0) is not None


def test_the_events_of_a_decided_lead_are_its_items_events() -> None:
    start = p.sequence(argument(), p.rest())
    st, _ = matched(start, "<p=unit>Seo", 0, True, (0, 1, 1), {})
    assert [event[:3] for event in st.events][:1] == [(Role.ARG_NAME, 3, 7)]
    assert st.commits == 1 and st.commit_events >= 1


# --- corpus templates: every cut, every chunking -------------------------------------------

@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_every_cut_of_a_rendering_leaves_the_general_state(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    start = parser.parser.start
    if not any(stream_shortcut(expr) for expr in expressions_in(start)):
        pytest.skip("no shortcut a stream run may take")
    for output in with_text_and_cut(rendering):
        text = parser.prompt.tail + output
        for cut in range(len(text) + 1):
            fast, general = both_paths(start, text[:cut], monkeypatch)
            assert fast == general, (cut, text[:cut])


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_streams_give_the_general_paths_deltas(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    for output in with_text_and_cut(rendering):
        for size in SIZES:
            chunks = [parser.prompt.tail] + [output[at:at + size]
                                             for at in range(0, len(output), size)]
            fast = streamed_deltas(parser.parser, chunks)
            with general_paths(parser.parser.start, monkeypatch):
                general = streamed_deltas(parser.parser, chunks)
            assert fast == general, (size, output)


def streamed_deltas(parser: p.Parser, chunks: list[str]) -> list[Any]:
    """Every feed's deltas, then finish's, and the deviations known at the end."""
    stream = StreamParser(parser)
    fed = [stream.feed(chunk) for chunk in chunks]
    return [*fed, stream.finish(), stream.deviations]


# --- a value's closing tag ------------------------------------------------------------------

@pytest.mark.parametrize("text", ["\n</p>", "</p>", "\n</p", "</p", "\n", "", "\n\n</p>",
                                  "\n</q>", "</q>", "</function>", "\n</function>x", "</", "x"])
@pytest.mark.parametrize("partial", [True, False])
@pytest.mark.parametrize("traced", [True, False])
def test_a_closing_tag_is_taken_as_its_tolerant_choice_takes_it(
        text: str, partial: bool, traced: bool) -> None:
    stops = Intruders((), ("</function>",), ("</q>",))
    choice = tolerant_closing("</p>", PaddedLiteral("\n", "</p>"), stops)
    closing = TolerantClosing(choice, "\n", "</p>")
    outcomes = []
    for expr in (closing, choice):
        st = MatchState(text, partial, memo={}, traced=traced)
        end = expr.match(st, 0)
        resume = closing if st.resume is choice else st.resume  # it resumes as itself
        outcomes.append((end, st.events, st.commits, shape(resume), st.resume_pos,
                         st.commit_events, st.fail_pos, st.expected))
    assert outcomes[0] == outcomes[1]
