"""Template Lab's analyzer: derive a chat template's output parser by differential rendering."""

from __future__ import annotations

from analyzer.analysis.diff import diff_split, segmentize_markers
from analyzer.analysis.pipeline import analyze
from analyzer.analysis.playground import (
    RenderDiff,
    RenderRequest,
    RenderResult,
    diff_renders,
    render_conversation,
)
from analyzer.analysis.variants import compare_variants
from analyzer.canonical import analysis_from_json, analysis_to_json
from analyzer.checks.compare import TemplateComparison, compare_templates, comparison_to_json
from analyzer.checks.serve import EngineAdvice, serve_advice
from analyzer.errors import (
    AnalyzerError,
    InvalidInputError,
    RenderLimitError,
    SandboxViolationError,
    TemplateLoadError,
    TemplateRaisedError,
    TemplateRenderError,
    TemplateSyntaxError,
)
from analyzer.gbnf import (
    GrammarError,
    GrammarResult,
    build_tool_grammar,
    check_gbnf_strict,
    grammar_accepts,
    schema_to_gbnf,
)
from analyzer.generator import (
    GeneratedParser,
    ParseReport,
    PromptContext,
    generate_parser,
    parse_output,
)
from analyzer.model import Analysis, DiffSplit, Segment
from analyzer.parsing.deviations import Deviation, DeviationAction, DeviationKind
from analyzer.parsing.message import Message, ToolCall
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import Accumulator, Delta, StreamParser
from analyzer.peg import ParseProblem
from analyzer.render.limits import RenderLimits
from analyzer.render.loading import (
    TemplateSource,
    load_template_bytes,
    load_template_file,
    load_template_text,
)
from analyzer.render.template import ChatTemplate
from analyzer.version import ANALYZER_VERSION

__all__ = [
    "EngineAdvice",
    "RenderDiff",
    "RenderRequest",
    "RenderResult",
    "TemplateComparison",
    "compare_templates",
    "comparison_to_json",
    "diff_renders",
    "render_conversation",
    "serve_advice",
    "Accumulator",
    "Delta",
    "Deviation",
    "DeviationAction",
    "DeviationKind",
    "GeneratedParser",
    "Message",
    "ParseOptions",
    "ParseProblem",
    "ParseReport",
    "PromptContext",
    "StreamParser",
    "ToolCall",
    "generate_parser",
    "parse_output",
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
    "InvalidInputError",
    "RenderLimitError",
    "RenderLimits",
    "SandboxViolationError",
    "TemplateLoadError",
    "TemplateRaisedError",
    "TemplateRenderError",
    "TemplateSource",
    "TemplateSyntaxError",
    "load_template_bytes",
    "load_template_file",
    "load_template_text",
    "GrammarError",
    "GrammarResult",
    "build_tool_grammar",
    "check_gbnf_strict",
    "grammar_accepts",
    "schema_to_gbnf",
]
