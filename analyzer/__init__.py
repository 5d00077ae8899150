"""Template Lab's analyzer: derive a chat template's output parser by differential rendering."""

from __future__ import annotations

from analyzer.errors import AnalyzerError, TemplateLoadError, TemplateRaisedError, TemplateRenderError
from analyzer.render import ChatTemplate
from analyzer.analysis import analyze
from analyzer.canonical import analysis_from_json, analysis_to_json
from analyzer.diff import diff_split, segmentize_markers
from analyzer.model import Analysis, DiffSplit, Segment
from analyzer.variants import compare_variants
from analyzer.version import ANALYZER_VERSION

__all__ = [
    "ANALYZER_VERSION",
    "Analysis",
    "DiffSplit",
    "Segment",
    "analysis_from_json",
    "analysis_to_json",
    "analyze",
    "compare_variants",
    "diff_split",
    "segmentize_markers",
    "AnalyzerError",
    "ChatTemplate",
    "TemplateLoadError",
    "TemplateRaisedError",
    "TemplateRenderError",
]
