"""TAG_WITH_JSON calls: the name in markers, the arguments one JSON object.

    [id] name_prefix NAME name_suffix [index] [id] args.start {...} args.end [id] close
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analyzer import peg as p
from analyzer.generator.arguments import arguments_value
from analyzer.generator.build import NAME_END, Build, closing, one_of_leading, spaced
from analyzer.generator.call_ids import id_at, named, plain_name
from analyzer.generator.calls import Call, CallGrammar, layout
from analyzer.model import CallIdPosition


def function_head(b: Build, name: str, captured: bool) -> p.Expr:
    """Match a call's opening up to the name suffix."""
    fun = b.analysis.tools.function
    name_part = named(b, name) if captured else plain_name(b, name)
    opening = id_at(b, CallIdPosition.PRE_FUNC_NAME, captured)
    return opening + name_part + after_name(fun.name_suffix, captured)


def after_name(suffix: str, noted: bool) -> p.Expr:
    """Match what ends the name (its suffix marker); a suffix left out, the name straight
    followed by the JSON object, is read as there (noted when the call is read)."""
    core = suffix.strip()
    if not core:
        return NAME_END
    left_out = NAME_END + p.peek(p.space() + p.literal("{"))
    if noted:
        left_out = p.noted(left_out, "missing_control_token", "accepted",
                           f"`{core}` after the name")
    return p.choice(spaced(core), left_out)


def arguments_start(b: Build) -> p.Expr:
    """Match the marker before the arguments; one left out (the name or id straight followed
    by the JSON object) is read as there, and noted."""
    start = b.analysis.tools.arguments.start.strip()
    if not start:
        return p.eps()
    missing = p.noted(p.peek(p.space() + p.literal("{")), "missing_control_token", "accepted",
                      f"`{start}` before the arguments")
    return p.choice(spaced(start), missing)


def function_call(b: Build, name: str) -> p.Expr:
    """Match one whole call of the named function."""
    args, fmt = b.analysis.tools.arguments, b.analysis.tools.format
    # The first marker written after the arguments: where a whole parse looks for their end.
    ends = (args.end, b.analysis.tools.function.close, fmt.per_call_end, fmt.section_end)
    follower = next((end.strip() for end in ends if end.strip()), "")
    value = arguments_value(fmt.uses_python_dicts, follower)
    rest = (
        id_at(b, CallIdPosition.BETWEEN_FUNC_AND_ARGS, json_next=True) + arguments_start(b)
        + p.space() + value + closing(args.end) + id_at(b, CallIdPosition.POST_ARGS)
        + closing(b.analysis.tools.function.close)
    )
    return p.tool(function_head(b, name, True) + p.commit() + rest)


def tag_json_calls(b: Build, tools: Sequence[Mapping[str, Any]]) -> CallGrammar:
    """Build the tool-call grammar for a TAG_WITH_JSON template."""
    names = sorted(p.tool_names(tools), key=len, reverse=True)
    calls = one_of_leading([p.rule(f"call-{n}", function_call(b, n)) for n in names])
    heads = p.choice(*(function_head(b, n, False) for n in names))
    return layout(b, Call(calls, heads))
