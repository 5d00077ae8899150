"""Declarative last-resort patches for templates whose renders cannot reveal their format.

Each workaround names itself, recognizes its templates by a substring of the source, and
patches the finished analysis. The analysis lists the names of those it applied. The list is
kept short on purpose: the differential mechanism is fixed first, a workaround is the last
resort for formats a template never renders.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from analyzer.model import (
    Analysis,
    ContentAnalysis,
    ContentMode,
    Marker,
    ReasoningAnalysis,
    ReasoningMode,
)


@dataclass(frozen=True)
class Workaround:
    """A named patch applied to analyses of templates whose source matches."""

    name: str
    applies: Callable[[str, Analysis], bool]
    patch: Callable[[Analysis], Analysis]
    why: str


def _source_has(*needles: str) -> Callable[[str, Analysis], bool]:
    return lambda source, _analysis: all(needle in source for needle in needles)


def _granite_markers(analysis: Analysis) -> Analysis:
    reasoning = ReasoningAnalysis(ReasoningMode.TAG_BASED, "<think>", "</think>",
                                  analysis.reasoning.field)
    content = ContentAnalysis(ContentMode.WRAPPED_WITH_REASONING, "<response>", "</response>",
                              analysis.content.requires_nonnull_content)
    return dataclasses.replace(analysis, reasoning=reasoning, content=content)


WORKAROUNDS: tuple[Workaround, ...] = (
    Workaround(
        name="granite-3.3-thinking-prompt",
        applies=_source_has("Write your thoughts between <think></think> and write your "
                            "response between <response></response>"),
        patch=_granite_markers,
        why="Granite 3.3 never renders reasoning; only its system prompt names the markers.",
    ),
)


def apply_workarounds(source: str, analysis: Analysis) -> Analysis:
    """Apply every matching workaround in order and list the ones applied."""
    applied = list(analysis.workarounds)
    for workaround in WORKAROUNDS:
        if workaround.applies(source, analysis):
            analysis = workaround.patch(analysis)
            applied.append(workaround.name)
            analysis = _with_marker_origins(analysis, workaround.name)
    return dataclasses.replace(analysis, workarounds=tuple(applied))


def _with_marker_origins(analysis: Analysis, name: str) -> Analysis:
    """Record markers the patch introduced that no comparison produced."""
    known = {(m.role, m.text) for m in analysis.markers}
    fields = {
        "reasoning.start": analysis.reasoning.start,
        "reasoning.end": analysis.reasoning.end,
        "content.start": analysis.content.start,
        "content.end": analysis.content.end,
    }
    added = [Marker(role, text, f"workaround:{name}", None, None)
             for role, text in fields.items() if text and (role, text) not in known]
    return dataclasses.replace(analysis, markers=analysis.markers + tuple(added))
