"""A whole parse of a short output (one call) pays a fixed cost: the content before the call,
the call's head looked for by the content loop, the members after the name, the mapping and
the report. Whole parses that record no failures take shortcuts there (the head and the
known members read by one regex, the text loop ended by the head's regex, rules matched as
their bodies, content found and recorded in one step, a clean report without bookkeeping);
each must give what the general path gives: the same end and events as a traced run (which
takes no shortcut), and the same message and deviations as a stream (which takes none
either), on every template's rendering and on that rendering edited as models edit it."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import (
    analysed,
    checked,
    expressions_in,
    generated_call,
    generated_call_or_skip,
    template_paths,
    whole_outcome,
)

from analyzer.generator import ParseReport
from analyzer.generator.build import BreaksBefore, LeadRun
from analyzer.generator.tools_json import MemberLoop
from analyzer.model import ToolFormat
from analyzer.parsing.deviations import collected, in_output
from analyzer.parsing.mapper import to_message
from analyzer.parsing.recovery import recovered_events
from analyzer.peg import Expr, ParseResult
from analyzer.peg.expressions import RuledSequence

# Edits where the shortcuts decide: around the members after the name (known keys, unknown
# ones, a value that breaks after its key), the head (whitespace, a member before the name),
# the text before and after the call.
EDITS = (
    ('"arguments"', '"parameters"'), ('"parameters"', '"arguments"'),
    (', "arguments"', ',"arguments"'), (', "parameters"', ',"parameters"'),
    (', "arguments"', ' , "id": "c1", "arguments"'), ('"arguments": {', '"arguments":{'),
    ('"arguments": {', '"arguments": 5, "a": {'), ('"parameters": {', '"parameters": "{'),
    ('"arguments": {', '"arguments": "{'), ('}}', '}, "arguments": {}}'), ('}}', '} }'),
    ('}}', '},}'), ('{"name"', '{ "name"'), ('{"name"', '{\n"name"'),
    ('{"name"', '{"id": 1, "name"'), ('"name"', '"nam"'), ("search_records", "search_record"),
)


def edited(output: str) -> list[str]:
    """The rendering, with text before and after it, and edited once each way."""
    found = [output, "Sure.\n" + output, output + "\nDone.", " " + output + " ", output + output]
    for old, new in EDITS:
        at = output.find(old)
        if at >= 0:
            found.append(output[:at] + new + output[at + len(old):])
    return found


def cut(output: str) -> list[str]:
    """The rendering cut at a few places (a stream of a cut output may read its end
    otherwise than a whole parse does: those are compared with the traced run only)."""
    return [output[:at] for at in range(1, len(output), max(1, len(output) // 10))]


def holds(start: Expr, kinds: tuple[type, ...]) -> set[type]:
    """The kinds of shortcut the grammar holds (walked through their general forms)."""
    return {type(expr) for expr in expressions_in(start) if type(expr) in kinds}


def reported_the_long_way(parser_start: Expr, tail: str, text: str) -> ParseReport:
    """The report parse_report built before it skipped the bookkeeping of clean outputs."""
    events, complete = recovered_events(parser_start, text, False)
    result = ParseResult(text=text, events=tuple(events), complete=complete)
    problems = tuple(problem.shifted(tail) for problem in result.problems)
    deviations = in_output(collected(result.problems, result.notices), tail)
    return ParseReport(to_message(result), problems, deviations)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_whole_parse_of_a_call_equals_the_general_path(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    start, tail = parser.parser.start, parser.prompt.tail
    for output in edited(rendering) + cut(rendering):
        text = tail + output
        assert whole_outcome(start, text, False) == whole_outcome(start, text, True), output
        assert parser.parse_report(output) == reported_the_long_way(start, tail, text), output
    for output in edited(rendering):
        checked(parser, output, sizes=(7,))  # message and deviations as a stream's


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_a_json_call_grammar_reads_its_head_and_known_members_in_one_step(path: Path) -> None:
    found = generated_call(path)
    if found is None:
        pytest.skip("no generated parser, or the template cannot render the call")
    fmt = analysed(path).tools.format
    if fmt.mode != ToolFormat.JSON_NATIVE:
        pytest.skip("not a template whose calls are JSON objects")
    start = found[0].parser.start
    kinds = holds(start, (MemberLoop, BreaksBefore, LeadRun))
    # An object keyed by the function's name has no members after the name.
    assert kinds == {BreaksBefore, LeadRun} | (set() if fmt.fun_name_is_key else {MemberLoop})
    assert type(start) is RuledSequence  # the output rule: matched as its body's items
