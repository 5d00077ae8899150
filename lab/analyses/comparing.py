"""The compare page's door into the analyzer: two stored templates compared three ways.

Source lines (unchanged runs folded to their context), the analysis fields that differ, and
the canonical conversations both render, the differing renders side by side. The JSON API
(workbench_api) compares through compare_stored too. The comparison runs in a child process
bounded like an analysis (analyzer.analysis.isolated): a hostile template ends with an error
naming the limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe

from analyzer import TemplateComparison, compare_templates
from analyzer.analysis.isolated import run_isolated
from analyzer.checks.compare import BehaviourCase, SourceLine, comparison_to_json
from lab.analyses import engine
from lab.analyses.models import Template
from lab.analyses.presenters import pane_html, special_token_pattern, visible_html

CONTEXT = 3  # unchanged lines kept around each change
# A comparison renders each canonical conversation through both templates: a few dozen renders.
COMPARE_SECONDS = 8.0
COMPARE_MEMORY_MB = 768


@dataclass(frozen=True)
class Fold:
    """A run of unchanged lines left out of the source diff."""

    count: int


@dataclass(frozen=True)
class BehaviourView:
    name: str
    same: bool
    left_html: SafeString | None
    right_html: SafeString | None
    left_error: str
    right_error: str


@dataclass(frozen=True)
class CompareView:
    comparison: TemplateComparison
    source: tuple[SourceLine | Fold, ...]
    behaviour: tuple[BehaviourView, ...]


def compare_stored(a: Template, b: Template) -> TemplateComparison:
    """Compare two stored templates in a killable child process: source lines, analysis
    fields, canonical renders (AnalysisLimitError names the limit it ran over)."""
    left, right = engine.source_of(a), engine.source_of(b)
    name_a, name_b = a.display_name, b.display_name  # read here: the child opens no database
    return run_isolated(
        lambda: compare_templates(left, right, name_a=name_a, name_b=name_b),
        seconds=COMPARE_SECONDS, memory_mb=COMPARE_MEMORY_MB, what="comparison")


def comparison_json(comparison: TemplateComparison) -> str:
    """The comparison's canonical JSON (same templates, same bytes)."""
    return comparison_to_json(comparison)


def compare(a: Template, b: Template) -> CompareView:
    """Compare two stored templates (their special tokens included)."""
    comparison = compare_stored(a, b)
    tokens = [t for t in (a.bos_token, a.eos_token, b.bos_token, b.eos_token) if t]
    specials = special_token_pattern(tokens)
    behaviour = tuple(_behaviour(case, specials) for case in comparison.behaviour)
    return CompareView(comparison, folded(comparison.source), behaviour)


def folded(lines: tuple[SourceLine, ...], context: int = CONTEXT) -> tuple[SourceLine | Fold, ...]:
    """Keep changed lines and `context` unchanged lines around them; fold the rest."""
    changed = [i for i, line in enumerate(lines) if line.op != " "]
    keep = {j for i in changed for j in range(i - context, i + context + 1)}
    out: list[SourceLine | Fold] = []
    skipped = 0
    for i, line in enumerate(lines):
        if i in keep:
            if skipped:
                out.append(Fold(skipped))
                skipped = 0
            out.append(line)
        else:
            skipped += 1
    if skipped:
        out.append(Fold(skipped))
    return tuple(out)


def _behaviour(case: BehaviourCase, specials: re.Pattern[str]) -> BehaviourView:
    if case.same:
        return BehaviourView(case.name, True, None, None, "", "")
    if case.diff is None:  # one side refused: show what the other rendered, whole
        return BehaviourView(case.name, False, _plain(case.left, specials),
                             _plain(case.right, specials), case.left_error, case.right_error)
    prefix, suffix = len(case.diff.prefix), len(case.diff.suffix)
    left = pane_html(case.left, prefix, suffix, [], "a", specials)
    right = pane_html(case.right, prefix, suffix, [], "b", specials)
    return BehaviourView(case.name, False, left, right, "", "")


def _plain(text: str, specials: re.Pattern[str]) -> SafeString | None:
    if not text:
        return None
    return mark_safe(visible_html(text, specials, show_spaces=True))  # noqa: S308 - escaped
