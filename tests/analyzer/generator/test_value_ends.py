"""Tests for analyzer/generator/value_ends.py, derived from the templates' own renderings.

Every tagged-format template renders a call with two string arguments; the test then takes the
first value's closing tag out (or puts another element's closing tag in its place) and checks
that the same call comes back, with the deviation, in one shot and streamed in chunks.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from rendered_calls import ARGUMENTS, analysed, render_call, streamed, template_paths
from rendered_calls import checked as checked_in_chunks
from skipping_streams import AlwaysRuns

from analyzer.checks.verify import Rendered
from analyzer.generator import GeneratedParser, ParseReport, generate_parser
from analyzer.generator.value_ends import Intruders, ValueText
from analyzer.model import ToolFormat
from analyzer.parsing.stream import Delta, StreamParser
from analyzer.peg.scanning import SPACE_CHARS


@cache
def rendered(path: Path) -> tuple[GeneratedParser, Rendered, str, str] | None:
    """Return the parser, the render of a two-argument call and the value markers (or None
    when the template is not a tagged one with closing value tags, or cannot show it)."""
    analysis = analysed(path)
    args = analysis.tools.arguments
    if analysis.tools.format.mode != ToolFormat.TAG_WITH_TAGGED or analysis.handler != "auto":
        return None
    if not args.value_suffix.strip().startswith("</") or args.suffix_echoes_name:
        return None
    result = render_call(path, analysis, "two")
    if result is None:
        return None
    parser = generate_parser(analysis, result.options, prompt=result.prompt)
    return parser, result, args.value_suffix.strip(), args.name_suffix.strip()


def tagged(path: Path) -> tuple[GeneratedParser, Rendered, str, str]:
    found = rendered(path)
    if found is None:
        pytest.skip("not a tagged-argument template with closing value tags")
    return found


def checked(parser: GeneratedParser, output: str) -> ParseReport:
    """Parse one-shot and in chunks of 1, 3 and 7 characters: all must agree."""
    return checked_in_chunks(parser, output, (1, 3, 7))


def arguments(report: ParseReport) -> list[dict[str, object]]:
    return [json.loads(c.arguments) for c in report.message.tool_calls]


def first_value_close(output: str, value_suffix: str) -> int:
    at = output.find(value_suffix, output.find(next(iter(ARGUMENTS.values()))))
    assert at >= 0, "the render must close its first value"
    return at


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_missing_value_close_stops_at_the_next_parameter(path: Path) -> None:
    parser, result, value_suffix, _ = tagged(path)
    assert checked(parser, result.output).deviations == ()
    at = first_value_close(result.output, value_suffix)
    report = checked(parser, result.output[:at] + result.output[at + len(value_suffix):])
    assert arguments(report) == [ARGUMENTS]
    assert [(d.kind, d.action) for d in report.deviations] == [("missing_close", "accepted")]
    assert report.deviations[0].expected == f"`{value_suffix}`"


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_another_elements_closing_tag_closes_the_value_as_a_mismatch(path: Path) -> None:
    parser, result, value_suffix, name_suffix = tagged(path)
    if not name_suffix.startswith("</"):
        pytest.skip("the argument name has no closing tag to mismatch")
    at = first_value_close(result.output, value_suffix)
    output = result.output[:at] + name_suffix + result.output[at + len(value_suffix):]
    report = checked(parser, output)
    assert arguments(report) == [ARGUMENTS]
    assert [d.kind for d in report.deviations] == ["mismatched_close"]
    assert report.deviations[0].offset == at


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_value_left_open_at_the_end_is_closed_not_a_broken_message(path: Path) -> None:
    parser, result, value_suffix, _ = tagged(path)
    last = result.output.rfind(value_suffix)
    report = checked(parser, result.output[:last])
    assert arguments(report) == [ARGUMENTS]
    assert "missing_close" in [d.kind for d in report.deviations]


def test_tagged_templates_are_present() -> None:
    assert sum(rendered(path) is not None for path in template_paths()) >= 2


# Texts a value reads on over: no `<`, trailing whitespace or not, nothing but whitespace.
READ_ON = ("Paris", "Paris\n", "Pa ris \t", "  ", "\n\n", "x\r\n", "")


@pytest.mark.parametrize("pad", ["", "\n"])
def test_a_value_says_without_a_call_what_waiting_end_answers_on_text_without_its_lead(
        pad: str) -> None:
    # Expr.reads_on_without: a stream stretches a value over a chunk without `<` by itself.
    value = ValueText("</v>", pad, Intruders(("<p>",), ("</f>",), ("</w>",)))
    assert value.reads_on_without == "<"
    for before in ("", "Pa", "x\n", " "):
        for text in READ_ON:
            whole, at = before + text, len(before)
            assert value.waiting_end(whole, at) == max(at, len(whole.rstrip(SPACE_CHARS)))


def test_a_value_with_several_leads_leaves_it_to_waiting_end() -> None:
    assert ValueText("]]", "", Intruders(("<p>",), (), ())).reads_on_without == ""


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_long_value_streams_without_asking_its_leaf_at_every_chunk(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, result, _, _ = tagged(path)
    value = next(iter(ARGUMENTS.values()))
    output = result.output.replace(value, " ".join([value] * 40), 1)
    chunks = [output[at:at + 4] for at in range(0, len(output), 4)]
    asked = [0]
    waiting_end = ValueText.waiting_end

    def counted(leaf: ValueText, text: str, at: int) -> int:
        asked[0] += 1
        return waiting_end(leaf, text, at)

    tail = parser.prompt.tail
    monkeypatch.setattr(ValueText, "waiting_end", counted)
    fast = StreamParser(parser.parser, len(tail))
    deltas = streamed(fast, tail, chunks)
    monkeypatch.undo()
    slow = AlwaysRuns(parser.parser, len(tail))
    assert deltas == streamed(slow, tail, chunks)
    assert fast.message() == slow.message() and fast.deviations == slow.deviations
    assert asked[0] < len(chunks) // 4  # the value's ~60 chunks without `<` ask nothing


# Values of made-up formats: a padded closing, one without padding and without other
# elements' closings, several leads (`[` and `<`) with a lead repeated inside a marker.
VALUE_FORMS = (
    ValueText("</v>", "\n", Intruders(("<p=a>", "<p=bb>"), ("</f>", "<call>"), ("</k>",))),
    ValueText("</v>", "", Intruders(("<p=a>",), ("</f>",), ())),
    ValueText("[/v]", " ", Intruders(("[p]",), ("<<c>>",), ("</k>", "</kk>"))),
)


def reference_certain_end(value: ValueText, text: str, pos: int, upto: int) -> int:
    """_certain_end read literally: with a lead near the end, before the longest tail that
    may still begin a marker; then before whitespace and one other element's closing tag."""
    window = max(pos, upto - max(len(m) for m in value.markers))
    if any(lead in text[window:upto] for lead in value.leads):
        for at in range(pos, upto):
            tail = text[at:upto]
            if any(len(tail) < len(m) and m.startswith(tail) for m in value.markers):
                upto = at
                break
    end = pos + len(text[pos:upto].rstrip(SPACE_CHARS))
    for tag in value.stops.mismatched:
        if text.endswith(tag, pos, end):
            return pos + len(text[pos:end - len(tag)].rstrip(SPACE_CHARS))
    return end


def reference_waiting_end(value: ValueText, text: str, at: int) -> int:
    """waiting_end read literally (in the order it was first written)."""
    rest = text[at:]
    if not any(lead in rest for lead in value.leads):
        return at + len(rest.rstrip(SPACE_CHARS))
    whole_stop = any(m in rest for m in value.stops.markers)
    if rest in value.openers and value.end not in rest and not whole_stop:
        return at
    if value.end in rest or whole_stop:
        return -1
    return at + reference_certain_end(value, rest, 0, len(rest))


def value_texts(value: ValueText, count: int) -> list[str]:
    """Random texts of a value's markers, cut markers, whitespace and letters."""
    rng = random.Random(len(value.markers))
    letters = [" ", "\n", "\t", "a", "<", "[", "/", "v", ">", "]"]
    cut = [m[:size] for m in value.markers for size in range(1, len(m) + 1)]
    return ["".join(rng.choice(cut) if rng.random() < 0.25 else rng.choice(letters)
                    for _ in range(rng.randint(0, 9))) for _ in range(count)]


@pytest.mark.parametrize("value", VALUE_FORMS, ids=lambda v: repr(v.end + v.pad))
def test_a_values_certain_end_leaves_out_what_may_still_begin_a_marker(value: ValueText) -> None:
    for text in value_texts(value, 800):
        for pos in range(len(text) + 1):
            for upto in {pos, (pos + len(text)) // 2, len(text)}:
                expected = reference_certain_end(value, text, pos, upto)
                assert value._certain_end(text, pos, upto) == expected, (text, pos, upto)


@pytest.mark.parametrize("value", VALUE_FORMS, ids=lambda v: repr(v.end + v.pad))
def test_a_value_waits_where_its_match_would(value: ValueText) -> None:
    for text in value_texts(value, 800):
        for at in range(len(text) + 1):
            assert value.waiting_end(text, at) == reference_waiting_end(value, text, at), (
                text, at)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_long_values_middle_chunks_are_answered_in_feed_alone(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # StreamParser.fast: once a value's text sink is known, a chunk without `<` is escaped,
    # appended and sent by feed itself: neither the leaf nor _stretched is asked.
    parser, result, _, _ = tagged(path)
    value = next(iter(ARGUMENTS.values()))
    output = result.output.replace(value, " ".join(["a \"quoted\"\\ value\t"] * 40), 1)
    chunks = [output[at:at + 5] for at in range(0, len(output), 5)]
    asked = [0]
    stretched, waiting_end = StreamParser._stretched, ValueText.waiting_end

    def counted_stretch(stream: StreamParser, quiet: Any, end: int) -> list[Delta]:
        asked[0] += 1
        return stretched(stream, quiet, end)

    def counted_wait(leaf: ValueText, text: str, at: int) -> int:
        asked[0] += 1
        return waiting_end(leaf, text, at)

    tail = parser.prompt.tail
    monkeypatch.setattr(StreamParser, "_stretched", counted_stretch)
    monkeypatch.setattr(ValueText, "waiting_end", counted_wait)
    fast = StreamParser(parser.parser, len(tail))
    deltas = [fast.feed(chunk) for chunk in [tail, *chunks]] + [fast.finish()]
    monkeypatch.undo()
    slow = AlwaysRuns(parser.parser, len(tail))
    assert deltas == [slow.feed(chunk) for chunk in [tail, *chunks]] + [slow.finish()]
    assert fast.message() == slow.message() and fast.deviations == slow.deviations
    assert asked[0] < len(chunks) // 4  # the value's ~160 chunks ask nothing
