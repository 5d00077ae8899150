"""GBNF grammars for chat outputs: tool calls, JSON schemas, and checks against real engines."""

from __future__ import annotations

from analyzer.gbnf.check import GrammarMatch, grammar_accepts, match_text, rejection_offset
from analyzer.gbnf.errors import GrammarCompileError, GrammarError, GrammarRequestError, SchemaError
from analyzer.gbnf.json_schema import schema_to_gbnf
from analyzer.gbnf.lint import GbnfProblem, check_gbnf_strict
from analyzer.gbnf.result import GrammarResult, Trigger, TriggerKind
from analyzer.gbnf.tool_grammar import build_tool_grammar

__all__ = [
    "GbnfProblem",
    "GrammarCompileError",
    "GrammarError",
    "GrammarMatch",
    "GrammarRequestError",
    "GrammarResult",
    "SchemaError",
    "Trigger",
    "TriggerKind",
    "build_tool_grammar",
    "check_gbnf_strict",
    "grammar_accepts",
    "match_text",
    "rejection_offset",
    "schema_to_gbnf",
]
