"""JSON call bodies where the template renders tagged calls or a Python-style call list.

Models trained on JSON tool calls write `{"name": ..., "arguments": {...}}` (or a `[...]`
list of such objects) inside another format's call wrapper: `<tool_call>{...}</tool_call>`
where the template writes `<function=NAME><parameter=...>`. Only the template's wrapper
says a call begins there, so the body is read in its place, and noted.
"""

from __future__ import annotations

from dataclasses import replace

from analyzer import peg as p
from analyzer.generator.build import Build, closing, lit
from analyzer.generator.calls import CallGrammar, JsonBody
from analyzer.generator.python_calls import is_python_call_list
from analyzer.generator.tools_json import call_object
from analyzer.peg.state import FAIL, MatchState


class BodyStart(p.Expr):
    """Succeed, consuming nothing, where a JSON body may begin (`{`, or `[` for a list).

    Elsewhere it fails without saying it expected one: the body is a tolerance, not the
    template's form, so a call that does not parse is reported with what the template
    expects there (a declared function's name makes it an unknown function)."""

    __slots__ = ("openers",)

    def __init__(self, openers: str) -> None:
        self.openers = openers

    def match(self, st: MatchState, pos: int) -> int:
        if pos < st.n:
            return pos if st.text[pos] in self.openers else FAIL
        return st.need(self, pos, pos) if st.partial else FAIL

    def describe(self) -> str:
        return f"&json-body({self.openers})"


def json_build(b: Build) -> Build:
    """Return the build with the usual JSON call object's fields (`name`, `arguments`)."""
    tools = b.analysis.tools
    fmt = replace(tools.format, name_field="name", args_field="arguments", function_field="",
                  id_field="", gen_id_field="", fun_name_is_key=False, uses_python_dicts=False)
    return Build(replace(b.analysis, tools=replace(tools, format=fmt)), b.options)


def json_body(b: Build, names: list[str], listed: bool = True) -> JsonBody:
    """Match JSON call objects of the named functions (listed: or a `[...]` list of them),
    noted as departing from the template."""
    obj = call_object(json_build(b), names)
    call = p.tool(obj.whole)
    between = p.space() + p.optional(p.literals([",", ";"])) + p.space()
    objects = call + p.zero_or_more(between + call)
    lists = p.literal("[") + p.space() + objects + p.space() + p.literal("]")
    forms = p.choice(lists, objects) if listed else objects
    body = p.noted(forms, "json_body", "accepted", "the template's call markup, not a JSON body")
    openers = "{[" if listed else "{"
    head = BodyStart(openers) + (p.optional(p.literal("[") + p.space()) if listed else p.eps())
    return JsonBody(BodyStart(openers) + p.rule("json-body", body), head + obj.head)


def outside_the_list(b: Build, grammar: CallGrammar, names: list[str]) -> CallGrammar:
    """Also read a JSON body between a Python call list's wrapper tokens without the list's
    brackets (`<|tool_call_start|>{...}<|tool_call_end|>` where the template writes
    `<|tool_call_start|>[f(a=1)]<|tool_call_end|>`)."""
    fmt = b.analysis.tools.format
    start, end = fmt.section_start.strip(), fmt.section_end.strip()
    if not is_python_call_list(b.analysis) or not start.endswith("[") or not end.startswith("]"):
        return grammar
    opening = start.removesuffix("[").strip()
    if not opening:
        return grammar
    body = json_body(b, names, listed=False)  # a `[` there is the list, read as Python
    section = lit(opening) + p.space() + body.body + closing(end.removeprefix("]"))
    head = lit(opening) + p.space() + body.head
    return CallGrammar((*grammar.triggers, opening), p.choice(grammar.head, head),
                       p.choice(grammar.section, section))
