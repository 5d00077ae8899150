"""A JSON call array (`marker [ call, call ]` and its closing marker) is read, in a whole parse
that records no failures, by one loop (CallArray): the opening by a regex, each call object by
its own expression with the call's open and close events recorded around it, the comma or the
`]` by another regex. It must give what the section's general sequence gives (where it ends,
its events, its commits) for every template whose calls sit in such an array, on the
template's rendering with more calls, and broken around the array the ways models break it."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import expressions_in, generated_call, template_paths, whole_outcome

from analyzer.generator.tools_json import CallArray
from analyzer.peg import Expr
from analyzer.peg.state import FAIL, Event, MatchState

# Edits around the array: its brackets, the commas between calls, what follows a call.
EDITS = (
    ("[", "[ "), ("[", "[\n  "), ("[", ""), ("[", "[["), ("[{", "[]"),
    ("]", " ]"), ("]", "\n]"), ("]", ",]"), ("]", ""), ("]", "]]"), ("]", "}"),
    ("]", "] and more text"), (", {", " ,{"), (", {", ",\n\n{"), (", {", ",,{"),
    (", {", " {"), (", {", "; {"), (", {", ", [{"), (", {", ", {}, {"), (", {", ", 7, {"),
    (", {", ', {"x": 1}, {'), (", {", ', {"name": 1, '), ("}, {", "}}, {"),
    ("}, {", "} {"), ("}]", "}, ]"), ("}]", "},]"), ("}]", "}] ]"),
)


def array_of(start: Expr) -> CallArray | None:
    """The grammar's call array, if its calls sit in one."""
    return next((e for e in expressions_in(start) if isinstance(e, CallArray)), None)


def with_calls(output: str) -> str:
    """The rendering of one call object, with two more written after it in the array."""
    first, last = output.index("{"), output.rindex("}") + 1
    call = output[first:last]
    return output[:last] + ", " + call + ",\n " + call + output[last:]


def variants(output: str) -> list[str]:
    """The renderings with one and three calls, each edited once each way (at the first and
    last place), and cut, with a character dropped or doubled, at a few places."""
    found: list[str] = []
    for text in (output, with_calls(output)):
        found += [text, "Sure.\n" + text]
        for old, new in EDITS:
            for at in {text.find(old), text.rfind(old)} - {-1}:
                found.append(text[:at] + new + text[at + len(old):])
        step = max(1, len(text) // 16)
        for at in range(1, len(text), step):
            found += [text[:at], text[:at] + text[at + 1:], text[:at] + text[at - 1:]]
    return found


def run(expr: Expr, text: str, pos: int) -> tuple[int, list[Event], int]:
    """Match expr at pos in a whole untraced run: where it ends, its events (none when it
    fails) and its commits."""
    st = MatchState(text, partial=False, traced=False)
    end = expr.match(st, pos)
    return end, (st.events if end != FAIL else []), st.commits


def arrays() -> list[tuple[Path, CallArray, Expr, str, str]]:
    """Every template whose calls sit in an array: its array, start, prompt tail, rendering."""
    found = []
    for path in template_paths():
        generated = generated_call(path)
        if generated is None:
            continue
        parser, rendering = generated
        array = array_of(parser.parser.start)
        if array is not None:
            found.append((path, array, parser.parser.start, parser.prompt.tail, rendering))
    return found


ARRAYS = arrays()


def test_our_array_formats_have_a_call_array() -> None:
    names = {path.stem for path, *_ in ARRAYS}
    assert {"tools_json_array", "tools_name_as_key", "tools_markdown"} <= names


@pytest.mark.parametrize("found", ARRAYS, ids=lambda found: found[0].stem)
def test_call_array_matches_as_its_sequence(found: tuple[Path, CallArray, Expr, str, str]) -> None:
    _, array, start, tail, rendering = found
    general = array.general_form
    lead = general.prefix()[0][:1]
    for output in variants(rendering):
        text = tail + output
        # At every place the section may start: the loop against its general sequence.
        for pos in range(len(text) + 1):
            if not lead or text.startswith(lead, pos):
                assert run(array, text, pos) == run(general, text, pos), (output, pos)
        # And the whole output: untraced (shortcuts) against traced (the general path).
        assert whole_outcome(start, text, False) == whole_outcome(start, text, True), output
