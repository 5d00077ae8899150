"""A whole parse that records no failures reads the markup before every call after the first
(the separator and the per-call opener) by one regex and runs the rest of the call itself
(`LedLoop`): where that regex fails, the call could not begin there and the loop is over. A
traced run takes no shortcut: both must end alike and record the same events, on every
template's rendering of calls in a row (apart, spaced, cut, broken) and on the side-by-side
bench's renderings of many calls."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import (
    expressions_in,
    generated_call_or_skip,
    template_paths,
    whole_outcome,
)

from analyzer import peg as p
from analyzer.generator.build import Closing, LedLoop, led_loop
from analyzer.peg import Expr
from analyzer.peg.state import FAIL, MatchState
from bench import rendered

SEPARATORS = ("", "\n", " ", ", ", "\n\n", ";")


def in_a_row(output: str) -> list[str]:
    """The rendering twice and three times, apart in the ways models write calls apart, and
    with the later calls cut and edited."""
    found = [output + between + output for between in SEPARATORS]
    found += [output + output + output, output + "Done." + output]
    twice = output + output
    steps = range(len(output), len(twice), max(1, len(output) // 12))
    found += [twice[:at] for at in steps]
    found += [twice[:at] + twice[at + 1:] for at in steps]
    found += [twice[:at] + " " + twice[at:] for at in steps]
    found.append(output + output.replace("search_records", "search_recordz"))
    return found


def general_outcome(start: Expr, text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patched:
        patched.setattr(Closing, "match", lambda self, st, pos: self.choice.match(st, pos))
        return whole_outcome(start, text, True)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_calls_in_a_row_read_by_their_lead_equal_the_general_path(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    start = parser.parser.start
    if not any(isinstance(expr, LedLoop) for expr in expressions_in(start)):
        pytest.skip("no call loop read by its lead")
    for output in in_a_row(rendering):
        text = parser.prompt.tail + output
        assert whole_outcome(start, text, False) == general_outcome(start, text, monkeypatch), \
            output


@pytest.mark.parametrize("name", list(rendered.BY_NAME))
def test_the_bench_renderings_read_by_their_lead_equal_the_general_path(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if not rendered.INPUTS.is_dir():
        pytest.skip(f"bench inputs not found at {rendered.INPUTS}")
    try:
        output = rendered.render_output(rendered.BY_NAME[name], 3_000)
    except rendered.NotRendered as why:
        pytest.skip(f"{name}: {why}")
    start = output.parser.start
    for text in output.texts:
        whole = output.tail + text
        for cut in (len(whole), len(whole) * 2 // 3, len(whole) // 2):
            assert whole_outcome(start, whole[:cut], False) == general_outcome(
                start, whole[:cut], monkeypatch), (name, cut)


def outcome(expr: Expr, text: str, traced: bool) -> tuple[int, list[object]]:
    st = MatchState(text, partial=False, traced=traced)
    end = expr.match(st, 0)
    return end, (list(st.events) if end != FAIL else [])


def test_a_loop_whose_lead_is_not_exact_runs_the_item_where_its_regex_fails() -> None:
    # `(x | value) ":" call`: the lead reads the choice as its first alternative only (`x`);
    # at a JSON value the regex fails and the item runs, as the repetition would run it.
    item = p.choice(p.literal("x"), p.json_value()) + p.literal(":") + p.tool(
        p.tool_name(p.regex("[a-z]+")) + p.commit() + p.literal(";"))
    loop = led_loop(p.zero_or_more(item))
    assert isinstance(loop, LedLoop) and not loop.exact
    for text in ("x:a;", "x:a;1:b;", "1:a;", "[2]:a;x:b;", "x:", "x:a;1", "z", "", "x:a;:",
                 "x:a", "x:a;x:b"):
        assert outcome(loop, text, False) == outcome(loop.general_form, text, True), text


def test_a_loop_whose_lead_records_or_commits_is_left_alone() -> None:
    marked = p.zero_or_more(p.tool_name(p.literal("x")) + p.literal(":"))
    committed = p.zero_or_more(p.literal("x") + p.commit() + p.literal(":"))
    assert not isinstance(led_loop(marked), LedLoop)
    assert not isinstance(led_loop(committed), LedLoop)
