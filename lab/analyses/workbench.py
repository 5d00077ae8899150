"""The lab's door into the analyzer's daily tools: render any conversation, compare two
templates, and the engine flags ("serve it") of an analysis.

Views and page code call these functions only; they take stored rows and return the
analyzer's frozen results (documented in README: RenderResult, RenderDiff,
TemplateComparison, EngineAdvice, StructuralTag). Analyzer errors propagate as
`engine.AnalyzerError` (InvalidInputError for a bad request, TemplateRenderError for a
template that refuses it), each with a message saying where and what.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer.analysis.pipeline import ANALYSIS_CLOCK
from analyzer.analysis.playground import (
    RenderDiff,
    RenderRequest,
    RenderResult,
    diff_renders,
    render_conversation,
)
from analyzer.canonical import analysis_from_json
from analyzer.checks.compare import TemplateComparison, compare_templates, comparison_to_json
from analyzer.checks.serve import EngineAdvice, serve_advice
from analyzer.checks.structural_tag import StructuralTag, check_structural_tag, structural_tag
from lab.analyses.engine import source_of

if TYPE_CHECKING:
    from lab.analyses.models import Analysis, Template

__all__ = [
    "RenderDiff",
    "RenderRequest",
    "RenderResult",
    "ServeIt",
    "TemplateComparison",
    "compare_stored",
    "comparison_json",
    "render_pair",
    "render_stored",
    "serve_it",
]

# Renders shown in the lab (and their permalinks) read the analysis' moment: they never change.
FIXED_NOW = ANALYSIS_CLOCK


@dataclass(frozen=True)
class ServeIt:
    """What to pass each engine for an analysed template, and its structural tag."""

    engines: tuple[EngineAdvice, ...]
    structural_tag: StructuralTag
    llguidance_verdict: str  # "accepted", where it was rejected, or why it was not checked


def render_stored(template: Template, request_json: str) -> RenderResult:
    """Render a request (RenderRequest JSON: {"messages", "tools", "kwargs",
    "add_generation_prompt", "continue_final_message", "bos_token", "eos_token"}) through a
    stored template, with the template's own bos/eos unless the request sets them."""
    request = RenderRequest.from_json(request_json)
    return render_conversation(source_of(template), request, now=FIXED_NOW)


def render_pair(template: Template, left_json: str, right_json: str) -> RenderDiff:
    """Render two requests through one template and diff the prompts."""
    return diff_renders(render_stored(template, left_json), render_stored(template, right_json))


def compare_stored(a: Template, b: Template) -> TemplateComparison:
    """Compare two stored templates: source lines, analysis fields, canonical renders."""
    return compare_templates(source_of(a), source_of(b), name_a=label(a), name_b=label(b))


def comparison_json(comparison: TemplateComparison) -> str:
    """The comparison's canonical JSON (same templates, same bytes)."""
    return comparison_to_json(comparison)


def label(template: Template) -> str:
    return f"{template.template_name} {template.sha256[:12]}"


def serve_it(analysis: Analysis, template_path: str = "chat_template.jinja") -> ServeIt:
    """The engine flags for a finished analysis, and its structural tag checked if possible."""
    result = analysis_from_json(analysis.result_json)
    source = source_of(analysis.template)
    tag = structural_tag(source, result)
    verdict = "not checked: llguidance is not installed"
    if importlib.util.find_spec("llguidance") is not None:
        check = check_structural_tag(source, result)
        verdict = "" if check is None else check.describe()
    return ServeIt(serve_advice(result, template_path=template_path), tag, verdict)
