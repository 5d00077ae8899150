"""TAG_WITH_TAGGED calls: the name and every argument in their own markers.

    name_prefix NAME name_suffix args.start
        arg.name_prefix KEY arg.name_suffix value_prefix VALUE value_suffix  (separator ...)
    args.end close

Arguments may come in any order. A raw value is typed by its schema in the mapper (`42`,
`True`, `{"a": 1}` become JSON), so a template that writes Python literals still parses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analyzer import peg as p
from analyzer.generator.build import NAME_END, Build, lit, maybe, one_of_leading, spaced
from analyzer.generator.call_ids import id_at, named, plain_name
from analyzer.generator.calls import Call, CallGrammar, layout
from analyzer.generator.values import argument_value
from analyzer.model import CallIdPosition


def argument(b: Build, key: str, schema: Mapping[str, Any]) -> p.Expr:
    """Match one `KEY = value` argument of a known name."""
    args = b.analysis.tools.arguments
    opening = lit(args.name_prefix) + p.arg_name(p.literal(key))
    if args.name_suffix.strip():
        opening += spaced(args.name_suffix)
    else:
        opening += NAME_END
    # Once the argument's name is read the value is settled: a stream may send it as it comes.
    return opening + p.commit() + argument_value(b, key, schema)


def argument_list(b: Build, parameters: Mapping[str, Any]) -> p.Expr:
    """Match the arguments, in any order, separated as the template separates them."""
    properties = parameters.get("properties") or {}
    if not isinstance(properties, Mapping) or not properties:
        return p.eps()
    keys = sorted(properties, key=len, reverse=True)
    one = one_of_leading([argument(b, k, properties[k] or {}) for k in keys])
    sep = b.analysis.tools.arguments.separator.strip()
    between = p.space() + p.optional(p.literal(sep)) + p.space() if sep else p.space()
    return p.optional(one + p.zero_or_more(between + one))


def function_head(b: Build, name: str, captured: bool) -> p.Expr:
    """Match a call's opening up to the name suffix."""
    fun = b.analysis.tools.function
    name_part = named(b, name) if captured else plain_name(b, name)
    suffix = spaced(fun.name_suffix) if fun.name_suffix.strip() else NAME_END
    return id_at(b, CallIdPosition.PRE_FUNC_NAME, captured) + name_part + suffix


def function_call(b: Build, definition: Mapping[str, Any]) -> p.Expr:
    """Match one whole call of a function."""
    name = p.tool_names([definition])[0]
    args = b.analysis.tools.arguments
    body = (
        id_at(b, CallIdPosition.BETWEEN_FUNC_AND_ARGS) + spaced(args.start) + p.space()
        + argument_list(b, p.tool_parameters(definition)) + maybe(args.end)
        + id_at(b, CallIdPosition.POST_ARGS) + maybe(b.analysis.tools.function.close)
    )
    return p.tool(function_head(b, name, True) + p.commit() + body)


def tagged_calls(b: Build, tools: Sequence[Mapping[str, Any]]) -> CallGrammar:
    """Build the tool-call grammar for a TAG_WITH_TAGGED template."""
    ordered = sorted(tools, key=lambda t: len(p.tool_names([t])[0]), reverse=True)
    calls = one_of_leading([p.rule(f"call-{p.tool_names([t])[0]}", function_call(b, t))
                            for t in ordered])
    heads = p.choice(*(function_head(b, p.tool_names([t])[0], False) for t in ordered))
    return layout(b, Call(calls, heads))
