"""Parser generation: from an analysis and request options, the grammar that splits outputs."""

from __future__ import annotations

from analyzer.generator.core import (
    GeneratedParser,
    OutputStream,
    ParseReport,
    generate_parser,
    parse_output,
)
from analyzer.generator.prompt import PromptContext, analysis_context, conversation_context
from analyzer.generator.regexjson import JsonCallsSegment  # its loops of calls' shapes
from analyzer.generator.regexrun import Shapes  # gives streams its shapes of decided runs
from analyzer.generator.regexuntil import UntilSegment  # values up to their marker's shapes

__all__ = [
    "GeneratedParser",
    "JsonCallsSegment",
    "OutputStream",
    "ParseReport",
    "PromptContext",
    "Shapes",
    "UntilSegment",
    "analysis_context",
    "conversation_context",
    "generate_parser",
    "parse_output",
]
