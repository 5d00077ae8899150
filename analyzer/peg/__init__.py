"""A small PEG engine for model outputs: partial input, captures by role, resumable runs.

Compose a grammar from marker strings and tool schemas, then parse or stream::

    from analyzer import peg as p

    call = p.tool(
        p.literal("<tool_call>") + p.commit() + p.space()
        + p.json_object(
            p.json_member("name", p.literal('"') + p.tool_name(p.literals(names)) + p.literal('"')),
            p.json_member("arguments", p.tool_args(p.json_value())),
        )
        + p.space() + p.literal("</tool_call>")
    )
    parser = p.Parser(p.content(p.until("<tool_call>")) + p.zero_or_more(call + p.space()))
    parser.parse(text, partial=True)       # ParseResult: captures by role
    print(parser.dump())                   # readable PEG rules

Put `commit()` right after a marker that settles what follows (a call's opening tag, `<think>`):
it turns later mismatches into errors instead of silent backtracking, and it lets a stream
emit what comes after it at once. Without it, text inside an optional or a choice is held back
until that choice is decided.
"""

from __future__ import annotations

from analyzer.peg.builder import (
    arg_json_value,
    arg_name,
    arg_string_value,
    call_id,
    capture,
    commit,
    content,
    end,
    eps,
    json_key,
    json_member,
    json_object,
    json_string,
    json_value,
    kept_as_text,
    literal,
    literals,
    not_followed_by,
    noted,
    one_of,
    one_or_more,
    optional,
    peek,
    reasoning,
    regex,
    repeat,
    rest,
    rule,
    schema_value,
    seq,
    space,
    tool,
    tool_args,
    tool_name,
    tool_names,
    tool_parameters,
    until,
    zero_or_more,
)
from analyzer.peg.diagnostics import ParseProblem
from analyzer.peg.errors import PegParseError
from analyzer.peg.expressions import Expr, Rule, choice, sequence
from analyzer.peg.json_values import ValueType, conforms, decode_json, normalize_python_json
from analyzer.peg.notes import Note, Notice
from analyzer.peg.parser import Parser, Run, run
from analyzer.peg.result import Captured, ParseResult
from analyzer.peg.roles import Role

__all__ = [
    "Captured",
    "Expr",
    "Note",
    "Notice",
    "ParseProblem",
    "ParseResult",
    "Parser",
    "PegParseError",
    "Role",
    "Rule",
    "Run",
    "ValueType",
    "arg_json_value",
    "arg_name",
    "arg_string_value",
    "call_id",
    "capture",
    "choice",
    "commit",
    "conforms",
    "content",
    "decode_json",
    "end",
    "eps",
    "json_key",
    "json_member",
    "json_object",
    "json_string",
    "json_value",
    "kept_as_text",
    "literal",
    "literals",
    "normalize_python_json",
    "not_followed_by",
    "noted",
    "one_of",
    "one_or_more",
    "optional",
    "peek",
    "reasoning",
    "regex",
    "repeat",
    "rest",
    "rule",
    "run",
    "schema_value",
    "seq",
    "sequence",
    "space",
    "tool",
    "tool_args",
    "tool_name",
    "tool_names",
    "tool_parameters",
    "until",
    "zero_or_more",
]
