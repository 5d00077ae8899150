"""The whole parse's shortcuts (a dispatch taken without its choice, `DispatchOrElse`; a
captured literal in one step, `LiteralCapture`; an argument's leading markup or a call's head
read by one regex, `LeadRun`; a dispatch by several beginnings, `DispatchByBeginnings`; a
closing marker taken without its choice, `Closing`) must give exactly what the general path
gives:
the same message and deviations, for every template's own rendering of a call and for the
rendering departed from (cut, characters dropped or added, names misspelled, JSON broken)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import generated_call_or_skip, template_paths

from analyzer.generator import ParseReport
from analyzer.generator.build import Closing, DispatchByBeginnings, DispatchOrElse, LeadRun
from analyzer.peg.captures import Capture, LiteralCapture
from analyzer.peg.state import MatchState


def departures(output: str) -> list[str]:
    """The rendering and edits of it a model might make."""
    found = [output, "Let me look that up.\n\n" + output]
    step = max(1, len(output) // 12)
    for at in range(0, len(output), step):
        found += [output[:at], output[:at] + output[at + 1 :], output[:at] + "<" + output[at:],
                  output[:at] + "x" + output[at:]]
    for wrong, right in (("city", "cityx"), ("query", "qu"), ("search_records", "search_recordz"),
                         ("Paris", '{"Paris'), ('"', "'")):
        found.append(output.replace(wrong, right, 1))
    return found


def outcome(parse: object, output: str) -> object:
    try:
        report = parse(output)  # type: ignore[operator]
    except Exception as error:  # noqa: BLE001 - both paths must fail alike
        return type(error).__name__, str(error)
    assert isinstance(report, ParseReport)
    return report.message, report.deviations


def item_by_item(run: LeadRun, st: MatchState, pos: int) -> int:
    """Match a lead run's sequence as it is, without the regex."""
    return run.general_form.match(st, pos)


def by_choice(closing: Closing, st: MatchState, pos: int) -> int:
    """Match a closing marker by its choice."""
    return closing.choice.match(st, pos)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_whole_parse_shortcuts_equal_the_general_path(path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    outputs = departures(rendering)
    fast = [outcome(parser.parse_report, output) for output in outputs]
    monkeypatch.setattr(DispatchOrElse, "match", DispatchOrElse.general)
    monkeypatch.setattr(LiteralCapture, "match", Capture.match)
    monkeypatch.setattr(LeadRun, "match", item_by_item)
    monkeypatch.setattr(DispatchByBeginnings, "match", DispatchByBeginnings.general)
    monkeypatch.setattr(Closing, "match", by_choice)
    for output, expected in zip(outputs, fast, strict=True):
        assert outcome(parser.parse_report, output) == expected, output
