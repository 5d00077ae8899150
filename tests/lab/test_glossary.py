"""The glossary of mode and label names the analysis page explains."""

from __future__ import annotations

from analyzer.model import CallIdPosition, ContentMode, ReasoningMode, ToolFormat
from lab.analyses import glossary


def test_every_mode_the_analyzer_can_report_has_a_meaning() -> None:
    kinds = {
        "reasoning": ReasoningMode,
        "content": ContentMode,
        "tools": ToolFormat,
        "call id": CallIdPosition,
    }
    for kind, enum in kinds.items():
        for member in enum:
            assert glossary.meaning(kind, member.value), (kind, member.value)


def test_forced_closed_is_explained_as_forced_open_when_thinking_is_on() -> None:
    # GLM-4.7's summary said FORCED_CLOSED next to prompt cards saying forced-open.
    text = glossary.meaning("reasoning", "FORCED_CLOSED")
    assert "forced open when thinking is on" in text and "closed block when it is off" in text


def test_an_unknown_name_has_no_meaning_rather_than_a_wrong_one() -> None:
    assert glossary.meaning("tools", "SOMETHING_NEW") == ""
