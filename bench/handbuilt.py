"""Hand-built grammars for the three benchmark formats, composed with analyzer.peg's builder.

These stand in for generated parsers until the generator exists; they use only the markers a
template analysis reports (section/per-call markers, name prefix/suffix, value suffix).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analyzer import peg as p

Tools = Sequence[Mapping[str, Any]]


def hermes_2_pro(tools: Tools) -> p.Parser:
    """`<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>`, repeated."""
    names = p.literals(p.tool_names(tools))
    call = p.tool(
        p.seq(
            p.literal("<tool_call>"),
            p.commit(),
            p.space(),
            p.literal("{"),
            p.space(),
            p.literal('"name"'),
            p.space(),
            p.literal(":"),
            p.space(),
            p.literal('"'),
            p.tool_name(names),
            p.literal('"'),
            p.space(),
            p.literal(","),
            p.space(),
            p.literal('"arguments"'),
            p.space(),
            p.literal(":"),
            p.space(),
            p.tool_args(p.json_value()),
            p.space(),
            p.literal("}"),
            p.space(),
            p.literal("</tool_call>"),
        )
    )
    root = p.content(p.until("<tool_call>")) + p.zero_or_more(p.rule("tool-call", call) + p.space())
    return p.Parser(root)


def functionary_v3_1(tools: Tools) -> p.Parser:
    """`<function=NAME>{json}</function>`, back to back."""
    call = p.tool(
        p.seq(
            p.literal("<function="),
            p.tool_name(p.literals(p.tool_names(tools))),
            p.literal(">"),
            p.commit(),
            p.tool_args(p.json_value()),
            p.literal("</function>"),
        )
    )
    root = p.content(p.until("<function=")) + p.zero_or_more(p.rule("tool-call", call) + p.space())
    return p.Parser(root)


def qwen3_coder_parameter(name: str, schema: Mapping[str, Any]) -> p.Expr:
    """`<parameter=NAME>\\nVALUE\\n</parameter>` with the value typed by its schema."""
    return p.seq(
        p.literal("<parameter="),
        p.arg_name(p.literal(name)),
        p.literal(">\n"),
        p.commit(),
        p.arg_string_value(p.until("\n</parameter>"), schema),
        p.literal("\n</parameter>"),
        p.space(),
    )


def qwen3_coder_function(definition: Mapping[str, Any]) -> p.Expr:
    """`<function=NAME>` then its parameters in any order, then `</function>`."""
    name = p.tool_names([definition])[0]
    properties = p.tool_parameters(definition).get("properties", {})
    parameters = [qwen3_coder_parameter(arg, schema) for arg, schema in properties.items()]
    return p.seq(
        p.literal("<function="),
        p.tool_name(p.literal(name)),
        p.literal(">"),
        p.commit(),
        p.space(),
        p.zero_or_more(p.choice(*parameters)) if parameters else p.eps(),
        p.literal("</function>"),
    )


def qwen3_coder(tools: Tools) -> p.Parser:
    """`<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>...</function>\\n</tool_call>`."""
    functions = p.choice(*(qwen3_coder_function(t) for t in tools))
    call = p.tool(
        p.seq(
            p.literal("<tool_call>"),
            p.commit(),
            p.space(),
            p.rule("function", functions),
            p.space(),
            p.literal("</tool_call>"),
        )
    )
    root = p.content(p.until("<tool_call>")) + p.zero_or_more(p.rule("tool-call", call) + p.space())
    return p.Parser(root)


GRAMMARS = {
    "hermes-2-pro": hermes_2_pro,
    "functionary-v3.1": functionary_v3_1,
    "qwen3-coder": qwen3_coder,
}
