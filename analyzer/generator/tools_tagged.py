"""TAG_WITH_TAGGED calls: the name and every argument in their own markers.

    name_prefix NAME name_suffix args.start
        arg.name_prefix KEY arg.name_suffix value_prefix VALUE value_suffix  (separator ...)
    args.end close

Arguments may come in any order. A raw value is typed by its schema in the mapper (`42`,
`True`, `{"a": 1}` become JSON), so a template that writes Python literals still parses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from analyzer import peg as p
from analyzer.generator.build import (
    NAME_END,
    Build,
    closing,
    lead_run,
    lit,
    maybe,
    one_of_leading,
    or_else,
    spaced,
)
from analyzer.generator.call_ids import id_at, named, plain_name
from analyzer.generator.calls import Call, CallGrammar, layout
from analyzer.generator.json_body import json_body, outside_the_list
from analyzer.generator.python_calls import is_python_call_list, python_argument
from analyzer.generator.tools_json import EndsBefore, diverge
from analyzer.generator.values import UNDECLARED, argument_value
from analyzer.model import CallIdPosition
from analyzer.peg.state import FAIL, MatchState

# An argument name the schema does not declare: word characters, dots and dashes.
ARGUMENT_NAME = re.compile(r"[\w.\-]+")
MAX_KEPT_NAMES = 64


def argument(b: Build, key: str, schema: Mapping[str, Any], settle: bool = True) -> p.Expr:
    """Match one `KEY = value` argument of a known name."""
    if is_python_call_list(b.analysis):
        return python_argument(p.literal(key))
    args = b.analysis.tools.arguments
    opening = lit(args.name_prefix) + p.arg_name(p.literal(key))
    if args.name_suffix.strip():
        opening += spaced(args.name_suffix)
    else:
        opening += NAME_END
    if not settle:
        return opening + argument_value(b, key, schema)
    # Once the argument's name is read the value is settled: a stream may send it as it comes.
    return lead_run(opening + p.commit() + argument_value(b, key, schema))


class UndeclaredArgument(p.Expr):
    """Match an argument whose name the request's schema does not declare.

    Its closing marker may repeat its name, so the name is read first and then the grammar
    of an argument of that name runs, its value typed as whatever JSON it is (else text).
    """

    __slots__ = ("b", "opening", "settle", "grammars")

    def __init__(self, b: Build) -> None:
        self.b = b
        self.opening = b.analysis.tools.arguments.name_prefix.strip()
        # A bare `NAME=` or `<NAME>` is weak evidence: without a longer marker the argument
        # must match whole, or it is left to the text after the call.
        self.settle = len(self.opening) > 1
        self.grammars: dict[str, p.Expr] = {}

    def match(self, st: MatchState, pos: int) -> int:
        start = pos + len(self.opening)
        if not st.text.startswith(self.opening, pos):
            if st.partial and st.n < start and self.opening.startswith(st.text[pos:]):
                return st.need(self, pos, pos)
            if pos < st.fail_pos:
                return FAIL  # not recorded: no message to build
            return st.fail(pos, f"`{self.opening}`")
        found = ARGUMENT_NAME.match(st.text, start)
        if st.partial and (found.end() if found else start) == st.n:
            return st.need(self, pos, pos)  # the name may go on
        if found is None:
            if start < st.fail_pos:
                return FAIL  # not recorded: no message to build (at every call's end)
            return st.fail(start, "an argument name")
        return self.grammar(found.group()).match(st, pos)

    def waiting_form(self) -> str | None:
        # As match waits: inside the opening, or after it inside a name (which may go on).
        inside = [re.escape(self.opening[:size]) for size in range(len(self.opening))]
        return "|".join([*inside, re.escape(self.opening) + f"(?:{ARGUMENT_NAME.pattern})?"])

    def grammar(self, name: str) -> p.Expr:
        """Return the grammar of an argument of that name (kept for names that repeat)."""
        grammar = self.grammars.get(name)
        if grammar is None:
            grammar = argument(self.b, name, UNDECLARED, self.settle)
            if len(self.grammars) < MAX_KEPT_NAMES:
                self.grammars[name] = grammar
        return grammar

    def describe(self) -> str:
        return "undeclared-argument"

    def prefix(self) -> tuple[str, bool]:
        return self.opening, False


def argument_list(b: Build, parameters: Mapping[str, Any]) -> p.Expr:
    """Match the arguments, in any order, separated as the template separates them."""
    properties = parameters.get("properties") or {}
    if not isinstance(properties, Mapping):
        properties = {}
    keys = sorted(properties, key=len, reverse=True)
    declared = [argument(b, k, properties[k] or {}) for k in keys]
    names = ", ".join(f"`{k}`" for k in sorted(keys)) or "none"
    # An argument the schema does not declare is kept (data is never dropped), and noted.
    undeclared = p.noted(UndeclaredArgument(b), "unknown_parameter", "accepted",
                         f"a declared parameter ({names})")
    one = or_else(one_of_leading(declared), undeclared) if declared else undeclared
    sep = b.analysis.tools.arguments.separator.strip()
    between = p.space() + p.optional(p.literal(sep)) + p.space() if sep else p.space()
    more = p.zero_or_more(lead_run(between + one))
    end = b.analysis.tools.arguments.end.strip()
    if end and not is_python_call_list(b.analysis) and no_argument_at(end, declared, sep, b):
        more = EndsBefore(more, (end,), skip_space=True)  # over at the arguments' end
    return p.optional(one + more)


def no_argument_at(end: str, declared: list[p.Expr], sep: str, b: Build) -> bool:
    """Tell whether, where the text begins with the arguments' end marker, the separator
    cannot match and every argument fails without committing: each declared one begins with
    its own literal, and an undeclared one with the name prefix or a name character."""
    leads = [argument.prefix()[0] for argument in declared]
    opening = b.analysis.tools.arguments.name_prefix.strip()
    if not all(leads) or not all(diverge(end, lead) for lead in (*leads, sep) if lead):
        return False
    return diverge(end, opening) if opening else ARGUMENT_NAME.match(end) is None


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
        + id_at(b, CallIdPosition.POST_ARGS) + closing(b.analysis.tools.function.close)
    )
    # A whole parse reads the call's leading markup (name, `{`, commit) by one regex.
    return p.tool(lead_run(function_head(b, name, True) + p.commit() + body))


def tagged_calls(b: Build, tools: Sequence[Mapping[str, Any]]) -> CallGrammar:
    """Build the tool-call grammar for a TAG_WITH_TAGGED template."""
    ordered = sorted(tools, key=lambda t: len(p.tool_names([t])[0]), reverse=True)
    calls = one_of_leading([p.rule(f"call-{p.tool_names([t])[0]}", function_call(b, t))
                            for t in ordered])
    heads = p.choice(*(function_head(b, p.tool_names([t])[0], False) for t in ordered))
    names = p.tool_names(tools)
    return outside_the_list(b, layout(b, Call(calls, heads, json_body(b, names))), names)
