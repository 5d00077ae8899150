"""The corpus app's door into the analyzer: analyze, verify and run parse vectors for a template.

Everything here returns plain values the tasks store as columns; nothing else in the corpus
app imports `analyzer`.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

import analyzer
from analyzer.analysis.pipeline import compiled
from analyzer.checks.robustness import check_robustness, pass_rate
from analyzer.checks.verify import Outcome, Verification, verification_to_json, verify_template
from analyzer.errors import AnalyzerError
from analyzer.model import RenderMode
from lab.analyses import engine as analyses_engine

if TYPE_CHECKING:
    from lab.analyses.models import Template

__all__ = ["AnalyzerError", "Evaluation", "analyze", "analyzer_version", "evaluate"]

# Enum-valued fields of the analysis: shown as modes, not markers.
_NOT_MARKERS = frozenset({"mode", "pos", "present", "base"})


@dataclass(frozen=True)
class Evaluation:
    """What the dashboard shows for one template, computed from its analysis."""

    tool_format: str
    reasoning_mode: str
    content_mode: str
    key_markers: str
    markers: dict[str, str]
    round_trip: str
    grammar: str
    cases_passed: int
    cases_failed: int
    cases_total: int
    failed_cases: str
    verification_json: str
    verify_ms: float
    vectors_total: int
    vectors_passed: int
    robustness_passed: int
    robustness_total: int


def analyzer_version() -> str:
    """Return the version results are stored under."""
    return analyses_engine.analyzer_version()


def analyze(template: Template) -> tuple[str, float]:
    """Analyse a stored template; return its canonical JSON and the milliseconds it took."""
    started = time.perf_counter()
    precompile(template)
    result_json = analyses_engine.analyze_template(template)
    return result_json, (time.perf_counter() - started) * 1000


def precompile(template: Template) -> None:
    """Compile the template in this process before its analysis runs in the resident child.

    The compile stores its code in the lab's code cache folder (LAB_CODE_CACHE_DIR), which the
    child loads, and the verification after it reuses the compiled template: one Jinja compile
    per template instead of two (a third of a corpus template's analysis).
    A template that does not compile is left for the child to report, as for any paste.
    """
    source = analyses_engine.source_of(template)
    try:
        compiled(source.source, source.bos_token, source.eos_token, RenderMode.HF)
    except AnalyzerError:
        pass


def evaluate(template: Template, analysis_json: str) -> Evaluation:
    """Verify the template's generated parser and run its vectors; summarize both."""
    analysis = analyzer.analysis_from_json(analysis_json)
    started = time.perf_counter()
    verification = verify_template(analyses_engine.source_of(template), analysis=analysis)
    verify_ms = (time.perf_counter() - started) * 1000
    total, passed = vector_counts(template.sha256)
    robust_passed, robust_total = pass_rate(
        [check_robustness(analyses_engine.source_of(template), analysis=analysis)])
    return Evaluation(
        tool_format=analysis.tools.format.mode.value,
        reasoning_mode=analysis.reasoning.mode.value,
        content_mode=analysis.content.mode.value,
        key_markers=" ".join(analysis.preserved_tokens)[:500],
        markers=markers_of(analysis_json),  # the canonical JSON of this very analysis
        round_trip=verification.round_trip.value,
        grammar=verification.grammar.value,
        **case_counts(verification),
        verification_json=verification_to_json(verification),
        verify_ms=verify_ms,
        vectors_total=total,
        vectors_passed=passed,
        robustness_passed=robust_passed,
        robustness_total=robust_total,
    )


def case_counts(verification: Verification) -> dict[str, Any]:
    """Count passed and failed cases; name the failed ones."""
    failed = [c.case for c in verification.failures]
    passed = [
        c
        for c in verification.cases
        if c.outcome == Outcome.PASS and c.grammar.outcome != Outcome.FAIL
    ]
    return {
        "cases_passed": len(passed),
        "cases_failed": len(failed),
        "cases_total": len(verification.cases),
        "failed_cases": ",".join(failed)[:300],
    }


def markers_of(analysis_json: str) -> dict[str, str]:
    """Flatten the analysis' reasoning, content and tools fields to {"dotted.name": text}."""
    data = json.loads(analysis_json)
    found: dict[str, str] = {}
    for part in ("reasoning", "content", "tools"):
        _flatten(data.get(part) or {}, part, found)
    return found


def _flatten(node: Mapping[str, Any], prefix: str, found: dict[str, str]) -> None:
    for key, value in node.items():
        name = f"{prefix}.{key}"
        if isinstance(value, Mapping):
            _flatten(value, name, found)
        elif isinstance(value, str) and value and key not in _NOT_MARKERS:
            found[name] = value
        elif isinstance(value, bool | list) and value and key not in _NOT_MARKERS:
            found[name] = str(value)


# --- parse vectors -------------------------------------------------------------------------


def vectors_file() -> Path:
    """Where the parse vectors are: LAB_CORPUS_VECTORS, else the shared corpus beside the repo."""
    configured = os.environ.get("LAB_CORPUS_VECTORS") or getattr(settings, "LAB_CORPUS_VECTORS", "")
    if configured:
        return Path(configured)
    shared = Path(settings.BASE_DIR) / ".." / "shared" / "corpus" / "vectors"
    return shared / "llamacpp-test-chat.jsonl"


def vector_counts(template_sha256: str) -> tuple[int, int]:
    """Run the vectors whose template has this source; return (total, passed)."""
    path = vectors_file()
    if not path.is_file():
        return 0, 0
    from analyzer.checks.vectors import run_vector

    templates = path.parent / ".." / "templates"
    vectors = vectors_by_template(str(path)).get(template_sha256, ())
    passed = sum(run_vector(vector, templates).passed for vector in vectors)
    return len(vectors), passed


@lru_cache(maxsize=4)
def vectors_by_template(path: str) -> dict[str, tuple[Any, ...]]:
    """Group a vector file's vectors by the sha256 of their template's source (once per file)."""
    from analyzer.checks.vectors import load_vectors

    templates = Path(path).parent / ".." / "templates"
    grouped: dict[str, list[Any]] = defaultdict(list)
    shas: dict[str, str] = {}
    for vector in load_vectors(path):
        if vector.template not in shas:
            shas[vector.template] = _source_sha(templates / vector.template)
        grouped[shas[vector.template]].append(vector)
    return {sha: tuple(vectors) for sha, vectors in grouped.items() if sha}


def _source_sha(path: Path) -> str:
    try:
        return analyzer.load_template_file(path).sha256
    except AnalyzerError:
        return ""
