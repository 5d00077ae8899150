"""A call object whose members the template writes in a known order (`parameter_order`) is
read, in a whole parse that records no failures, by one regex from `{` through those members
up to the next key (MemberLoop.head: the name member and string ids); arguments the template
writes last are taken up to a `}` followed by the object's own `}` and by what the template
writes after a call (MemberLoop.ends), where one strict check accepts that text as one JSON
object (arguments.checked_end), the json scanner not run.

Both must give what the object's general sequence gives (where it ends, its events, its
commits) for every template's rendering, the bench's renderings, and those texts departed
from: malformed arguments, the object's own braces written apart, candidates inside strings,
members out of the template's order or after the arguments, a noted key, members the
template does not write (noted as unknown), an undeclared function. Where the text departs,
the shortcut must not be taken."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from rendered_calls import expressions_in, generated_call, template_paths, whole_outcome

from analyzer.generator import arguments
from analyzer.generator.arguments import ByFirstCharacter
from analyzer.generator.tools_json import MemberLoop
from analyzer.peg import Expr
from analyzer.peg.state import FAIL, Event, MatchState
from bench import rendered

ARGS = '{"query": "hotels", "city": "Paris"}'  # rendered_calls.ARGUMENTS as JSON writes it
# Arguments that are no strict JSON object up to where a candidate end may be found, or
# whose text holds a candidate before their end: the check must refuse the first, the
# general path (the scanner) decides.
DEPARTED_ARGUMENTS = (
    '{"query": "hotels", "city": "Paris"',  # the object's `}` closes the arguments
    '{"query": "hotels", "city": "Paris",}', '{"query": hotels}', '{"query": NaN}',
    '{"query": "\\ud800"}', '{"query": ' + "7" * 5000 + "}", '{"query": "}}, {"}',
    '{"query": "a}}]b"}', '{"query": "}}</tool_call>"}', '{"q": {"b": {}}, "c": [{}]}',
    '{"q": {"b": {"c": {}}}}', '{"query": "hotels"} ', '{"query": "hotels"}\n',
    "[" * 3 + "]" * 3, '{"query": "x"}, "extra": 1', '{"query": "x"}}', '"{\\"query\\": 1}"',
    '{"deep": ' + "[" * 400 + "]" * 400 + "}", "{}", "{ }",
)


def member_loops(start: Expr) -> list[MemberLoop]:
    """The grammar's call-object loops that read members in the template's order."""
    return [e for e in expressions_in(start) if isinstance(e, MemberLoop) and e.head is not None]


def corpus_cases() -> list[tuple[str, Expr, str, str]]:
    """(name, grammar start, prompt tail, rendering) of every template whose call objects
    are read in the template's order, and of the bench's JSON renderings (a few KB)."""
    found = []
    for path in template_paths():
        generated = generated_call(path)
        if generated is not None and member_loops(generated[0].parser.start):
            parser, rendering = generated
            found.append((path.stem, parser.parser.start, parser.prompt.tail, rendering))
    if rendered.INPUTS.is_dir():
        for name in ("cohere2", "hermes-3", "qwen2.5", "llama-3.1", "mistral-nemo"):
            try:
                output = rendered.render_output(rendered.BY_NAME[name], 1_500)
            except rendered.NotRendered:
                continue
            start = output.parser.start
            found += [(f"bench-{name}", start, output.tail, text) for text in output.texts[:2]]
    return found


CASES = corpus_cases()


def arguments_at(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the call objects' arguments in a rendering (the first `{` after each
    arguments key, read by the json scanner)."""
    decoder = json.JSONDecoder()
    for key in ('"arguments"', '"parameters"'):
        at = text.find(key)
        while at >= 0:
            start = text.find("{", at)
            if start >= 0:
                try:
                    yield start, decoder.raw_decode(text, start)[1]
                except ValueError:
                    pass
            at = text.find(key, at + 1)


def departures(text: str) -> list[str]:
    """The text with each call's arguments replaced by each departed text, its members out
    of order or after the arguments, a noted key, an undeclared function."""
    found = [text]
    spans = list(arguments_at(text))
    for start, end in spans[:1] + spans[-1:]:
        found += [text[:start] + other + text[end:] for other in DEPARTED_ARGUMENTS]
        # The arguments' and the object's `}` apart, or spaced: the candidate is not there.
        found += [text[:end] + " " + text[end:], text[:end] + "\n\n" + text[end:]]
        found.append(text[:end] + ', "id": "x"' + text[end:])  # a member after the arguments
        found.append(text[:end] + ', "score": 0.5, "tags": [1]' + text[end:])  # unknown ones
    for old, new in (('"arguments"', '"parameters"'), ('"parameters"', '"arguments"'),
                     ("get_weather", "get_wether"), ("search_records", "search_recrods"),
                     ('"name"', '"nmae"'), ('"tool_name"', '"name"'), ('"tool_call_id": "',
                     '"tool_call_id": 7, "x": "'), ('": "', '":"'), ("{", "{ "),
                     ('"name"', '"type": "function", "name"'),  # members the template lacks
                     ('"name"', '"tags": ["a", {"b": null}], "done": true, "name"')):
        at = text.find(old)
        if at >= 0:
            found.append(text[:at] + new + text[at + len(old):])
    name_first = text.find('{"name"')
    if name_first >= 0 and spans:  # the arguments before the name: out of the order
        start, end = spans[0]
        body = text[name_first + 1 : start]
        found.append(text[:name_first + 1] + text[start - len('"arguments": '): end] + ", "
                     + body.rstrip().removesuffix('"arguments":').rstrip().rstrip(",")
                     + text[end:])
    return found


def run(expr: Expr, text: str, pos: int) -> tuple[int, list[Event], int]:
    """Match expr at pos in a whole untraced run: where it ends, its events (none when it
    fails) and its commits."""
    st = MatchState(text, partial=False, traced=False)
    end = expr.match(st, pos)
    return end, (st.events if end != FAIL else []), st.commits


def test_the_usual_json_call_objects_are_read_in_order() -> None:
    names = {name for name, *_ in CASES}
    assert {"tools_json_native", "tools_markdown", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use",
            "meta-llama-Llama-3.1-8B-Instruct", "Qwen-Qwen2.5-7B-Instruct",
            "CohereForAI-c4ai-command-r-plus-tool_use"} <= names
    if rendered.INPUTS.is_dir():
        assert "bench-cohere2" in names


@pytest.mark.parametrize("case", CASES, ids=lambda case: case[0])
def test_ordered_members_match_as_the_general_sequence(case: tuple[str, Expr, str, str]) -> None:
    _, start, tail, rendering = case
    loops = member_loops(start)
    for output in departures(rendering):
        text = tail + output
        for pos in (at for at in range(len(text)) if text[at] == "{"):
            for loop in loops:
                assert run(loop, text, pos) == run(loop.general_form, text, pos), (output, pos)
        assert whole_outcome(start, text, False) == whole_outcome(start, text, True), output


def scanner_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the general path's readings of the arguments (ByFirstCharacter.match)."""
    calls: list[int] = []
    general = ByFirstCharacter.match

    def counted(self: ByFirstCharacter, st: MatchState, pos: int) -> int:
        calls.append(pos)
        return general(self, st, pos)

    monkeypatch.setattr(ByFirstCharacter, "match", counted)
    return calls


@pytest.mark.parametrize("case", [c for c in CASES if c[0].startswith("bench-")],
                         ids=lambda case: case[0])
def test_arguments_written_last_are_checked_not_scanned(
        case: tuple[str, Expr, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    name, start, tail, rendering = case
    loops = [loop for loop in member_loops(start) if loop.last is not None]
    if not loops:
        pytest.skip(f"{name}: the template writes its arguments before another member")
    calls = scanner_calls(monkeypatch)
    text = tail + rendering
    spans = list(arguments_at(text))
    assert whole_outcome(start, text, False)[0] == len(text)
    assert spans and not calls  # every call's arguments taken by the check
    # Nested objects ending together, `}}` in a string: the next candidates are checked.
    first, end = spans[0]
    for other in ('{"q": {"b": {}}}', '{"s": "a}}b", "t": "c}}d"}', '{"q": {"b": 1} }'):
        whole_outcome(start, text[:first] + other + text[end:], False)
        assert not calls, other
    # Where the arguments are no strict object, the general path reads them.
    for other in DEPARTED_ARGUMENTS[:6]:
        whole_outcome(start, text[:first] + other + text[end:], False)
        assert first in calls, other
        calls.clear()


def test_the_check_refuses_what_the_scanner_reads_otherwise() -> None:
    decoder = json.JSONDecoder()
    for other in DEPARTED_ARGUMENTS:
        text = f'{{"name": "f", "arguments": {other}}}, '
        pos = text.index(":", 10) + 2
        try:
            scanned = decoder.raw_decode(text, pos)[1]
        except ValueError:
            scanned = -1
        for end in range(pos + 1, len(text) + 1):
            if text[end - 1] == "}":
                assert arguments.checked_end(text[pos:end], pos) in (-1, scanned), (other, end)


@pytest.mark.parametrize("limit", [640, 1000, 0])
def test_the_check_leaves_integers_over_the_limit_to_the_scanner(limit: int) -> None:
    saved = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        for digits in (600, 641, 700, 1001, 5000):
            span = '{"n": ' + "7" * digits + "}"
            try:
                scanned = json.JSONDecoder().raw_decode(span)[1]
            except ValueError:
                scanned = -1
            assert arguments.checked_end(span, 0) == scanned, (limit, digits)
    finally:
        sys.set_int_max_str_digits(saved)
