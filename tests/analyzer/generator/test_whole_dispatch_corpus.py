"""Whole parses of tagged calls take three shortcuts where they record no failures: a choice
whose alternatives begin with several texts sharing a first character dispatches by one regex
over those texts (`DispatchByBeginnings`: Kimi's `functions.NAME:` or `NAME:`); a dispatched
call's head is read by one regex (its whole-parse form, a `LeadRun` over captures, noted
items, regex leaves, lookaheads and a choice's first alternative); a closing marker that is
there is taken without its choice (`Closing`, in every run). A traced run, with `Closing`
running its choice, is the general path: both must end alike and record the same events, on
every template's rendering of a call and on that rendering departed from (cut, edited, the
namespace or the index left out)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rendered_calls import (
    expressions_in,
    generated_call_or_skip,
    template_paths,
    whole_outcome,
)

from analyzer import peg as p
from analyzer.generator.build import (
    Closing,
    Dispatch,
    DispatchByBeginnings,
    DispatchOrElse,
    LeadRun,
    beginnings,
    lead_run,
    one_of_leading,
)
from analyzer.peg import Expr
from analyzer.peg.roles import Role
from analyzer.peg.state import FAIL, Event, MatchState


def departures(output: str) -> list[str]:
    """The rendering, and the ways a model departs from it around a call's head."""
    found = [output, "Sure.\n" + output, output + output]
    steps = range(1, len(output), max(1, len(output) // 16))
    found += [output[:at] for at in steps]
    found += [output[:at] + output[at + 1 :] for at in steps]
    found += [output[:at] + output[at - 1 :] for at in steps]
    found += [output[:at] + " " + output[at:] for at in steps]
    edits = ((r"\w+\.(search_records)", r"\1"),  # the namespace left out
             (r"(search_records):\d+", r"\1"), (r"(search_records):(\d+)", r"\1:x\2"),
             (r"search_records", "search_records2"), (r"search_records", "search_recordz"),
             (r"(search_records)", r"\1 "), (r"(search_records\S*?)(<|\{)", r"\1 \2"),
             (r"\{", "x{"), (r"\{", "{{"), (r"\}", ""))
    found += [re.sub(pattern, new, output, count=1) for pattern, new in edits]
    return found


def shortcuts_in(start: Expr) -> bool:
    """Tell whether the grammar dispatches (its alternatives' whole-parse forms read their
    leads by one regex) or reads a lead by one regex."""
    kinds = (Dispatch, DispatchOrElse, LeadRun)
    return any(isinstance(expr, kinds) for expr in expressions_in(start))


def general_outcome(start: Expr, text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patched:
        patched.setattr(Closing, "match", lambda self, st, pos: self.choice.match(st, pos))
        return whole_outcome(start, text, True)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_dispatch_and_lead_runs_equal_the_general_path(path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    start = parser.parser.start
    if not shortcuts_in(start):
        pytest.skip("no dispatch or lead run in this grammar")
    for output in departures(rendering):
        text = parser.prompt.tail + output
        fast = whole_outcome(start, text, False)
        assert fast == general_outcome(start, text, monkeypatch), output


def named_call(name: str) -> Expr:
    """`("functions." | eps) NAME ":" /[0-9]+/` then JSON arguments, as a tool call."""
    head = p.choice(p.literal("functions."), p.eps()) + p.tool_name(p.literal(name))
    return p.tool(head + p.literal(":") + p.regex("[0-9]+") + p.commit()
                  + p.tool_args(p.json_value()))


def whole(expr: Expr, text: str, traced: bool = False) -> tuple[int, list[Event]]:
    st = MatchState(text, partial=False, traced=traced)
    end = expr.match(st, 0)
    return end, (list(st.events) if end != FAIL else [])


def test_beginnings_read_a_sequence_up_to_its_first_inexact_item() -> None:
    texts, exact = beginnings(named_call("get_weather")) or (frozenset(), True)
    assert texts == {"functions.get_weather:", "get_weather:"}
    assert not exact
    assert beginnings(p.regex("[a-z]+") + p.literal("x")) is None  # may begin anywhere


def test_dispatch_by_beginnings_takes_the_first_alternative_the_choice_would() -> None:
    # `get` begins `get_weather`: where the text holds the longer name, the choice still
    # reaches the shorter one first, and it fails there (`_weather` is no index).
    alternatives: list[Expr] = [p.rule("call-get", named_call("get")),
                    p.rule("call-get_weather", named_call("get_weather"))]
    dispatch = one_of_leading(alternatives)
    assert isinstance(dispatch, DispatchByBeginnings)
    for text in ("functions.get_weather:3{}", "get_weather:0{}", "get:1{}", "functions.get:1{}",
                 "functions.set:1{}", "functions.get_weathe:1{}", "functions.get"):
        assert whole(dispatch, text) == whole(dispatch.choice, text, traced=True), text


def test_a_call_head_is_read_by_one_regex_with_its_events() -> None:
    call = lead_run(named_call("get_weather"))
    assert isinstance(call, LeadRun) and call.tool
    text = 'functions.get_weather:12{"a": 1}'
    end, events = whole(call, text)
    assert end == len(text)
    assert [event[:3] for event in events] == [
        (Role.TOOL_OPEN, 0, 0), (Role.TOOL_NAME, 10, 21), (Role.TOOL_ARGS, 24, end),
        (Role.TOOL_CLOSE, end, end)]
    for text in ('functions.get_weather:12{"a": 1}', 'get_weather:7{}', "get_weather:{}",
                 "functions.get_weatherx:1{}"):
        assert whole(call, text) == whole(call.general_form, text, traced=True), text


def test_dispatch_by_beginnings_keeps_the_choice_order_over_the_longest_text() -> None:
    # Both may begin `get_weather`: the choice tries `get` first and takes it, where the
    # longest text found (`get_weather`) names the second alternative.
    short = p.tool(p.tool_name(p.literal("get")) + p.regex("[a-z_]+") + p.literal(":"))
    long = p.tool(p.tool_name(p.literal("get_weather")) + p.literal(":"))
    dispatch = one_of_leading([p.choice(p.literal("x."), p.eps()) + short,
                               p.choice(p.literal("x."), p.eps()) + long])
    assert isinstance(dispatch, DispatchByBeginnings)
    for text in ("get_weather:", "x.get_weather:", "get_x:", "get_weather", "x.get:"):
        assert whole(dispatch, text) == whole(dispatch.choice, text, traced=True), text


def test_a_lead_reads_a_choice_as_its_first_alternative_only() -> None:
    # Both alternatives match `ab`; the choice takes the first, recording its capture.
    noted = p.noted(p.literal("ab"), "call_wrapper", "accepted", "x")
    head = p.choice(p.tool_name(p.literal("ab")), noted) + p.space()
    run = lead_run(head + p.literal(":") + p.json_value())
    assert isinstance(run, LeadRun)
    for text in ("ab :1", "ab:1", "a:1", "ab"):
        assert whole(run, text) == whole(run.general_form, text, traced=True), text
