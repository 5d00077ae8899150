"""JSON call bodies where the template renders tagged calls or a Python-style call list.

Models trained on JSON tool calls write `{"name": ..., "arguments": {...}}` (or a `[...]`
list of such objects) inside another format's call wrapper: `<tool_call>{...}</tool_call>`
where the template writes `<function=NAME><parameter=...>`. Only the template's wrapper
says a call begins there, so the body is read in its place, and noted.
"""

from __future__ import annotations

from dataclasses import replace

from analyzer import peg as p
from analyzer.generator.build import Build
from analyzer.generator.calls import JsonBody
from analyzer.generator.tools_json import call_object
from analyzer.peg.state import FAIL, MatchState


class BodyStart(p.Expr):
    """Succeed, consuming nothing, where a JSON body may begin (`{` or `[`).

    Elsewhere it fails without saying it expected one: the body is a tolerance, not the
    template's form, so a call that does not parse is reported with what the template
    expects there (a declared function's name makes it an unknown function)."""

    __slots__ = ()

    def match(self, st: MatchState, pos: int) -> int:
        if pos < st.n:
            return pos if st.text[pos] in "{[" else FAIL
        return st.need(self, pos, pos) if st.partial else FAIL

    def describe(self) -> str:
        return "&json-body"


def json_build(b: Build) -> Build:
    """Return the build with the usual JSON call object's fields (`name`, `arguments`)."""
    tools = b.analysis.tools
    fmt = replace(tools.format, name_field="name", args_field="arguments", function_field="",
                  id_field="", gen_id_field="", fun_name_is_key=False, uses_python_dicts=False)
    return Build(replace(b.analysis, tools=replace(tools, format=fmt)), b.options)


def json_body(b: Build, names: list[str]) -> JsonBody:
    """Match JSON call objects of the named functions, noted as departing from the template."""
    obj = call_object(json_build(b), names)
    call = p.tool(obj.whole)
    between = p.space() + p.optional(p.literals([",", ";"])) + p.space()
    objects = call + p.zero_or_more(between + call)
    listed = p.literal("[") + p.space() + objects + p.space() + p.literal("]")
    body = p.noted(p.choice(listed, objects), "json_body", "accepted",
                   "the template's call markup, not a JSON body")
    head = BodyStart() + p.optional(p.literal("[") + p.space()) + obj.head
    return JsonBody(BodyStart() + p.rule("json-body", body), head)
