"""Muse Glimmer ATEM recipients: ` to=self` thinks, ` to=user` answers, ` to=NAME` calls.

    <|start|>assistant to=self<|message|>REASONING<|eom|>
    <|start|>assistant to=user<|message|>CONTENT<|eot|>
    <|start|>assistant to=NAME<|message|><atem:function_calls>
    <atem:invoke name="NAME">
    <atem:parameter name="KEY">VALUE</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eom|>

An ATEM block addressed to the user is text, not a call: only the recipient makes a call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from analyzer import peg as p
from analyzer.generator.build import Build, closing
from analyzer.generator.content import final_eos_texts
from analyzer.generator.routed import Destination, Route, Routing, routed_output
from analyzer.generator.value_ends import Intruders, ValueText, tolerant_closing
from analyzer.generator.values import UNDECLARED

RECIPIENT = re.compile(r"to=(\S+)")
PARAMETER_CLOSE = "</atem:parameter>"


def destination(header: str, names: frozenset[str]) -> Destination:
    """Read a recipient: self, the user, a declared function; anything else is text."""
    recipient = RECIPIENT.search(header)
    target = recipient.group(1) if recipient is not None else "user"
    if target == "self":
        return Destination(Route.REASONING)
    if target == "user":
        return Destination(Route.CONTENT)
    if recipient is not None and target in names:
        return Destination(Route.CALL, target, recipient.start(1))
    if recipient is None:
        return Destination(Route.TEXT)
    # An undeclared recipient stays visible as text.
    return Destination(Route.TEXT, target, recipient.start(1), tuple(sorted(names)))


PARAMETER_OPEN = '<atem:parameter name="'
CALL_CLOSE = ("</atem:invoke>", "</atem:function_calls>")


def value_stops(keys: list[str]) -> Intruders:
    """What a value never runs across: a declared parameter's opening (its closing tag was
    left out), the call's closing tags when more markup or the end follows."""
    return Intruders(tuple(f'{PARAMETER_OPEN}{k}">' for k in keys), CALL_CLOSE, ())


def value(schema: Mapping[str, Any], stops: Intruders) -> p.Expr:
    """Match a value and its closing tag (one left out is read as there, and noted)."""
    closing = tolerant_closing(PARAMETER_CLOSE, p.literal(PARAMETER_CLOSE), stops)
    return p.arg_string_value(ValueText(PARAMETER_CLOSE, "", stops), schema) + closing


def parameter(key: str, schema: Mapping[str, Any], stops: Intruders) -> p.Expr:
    """Match `<atem:parameter name="KEY">VALUE</atem:parameter>`."""
    return (p.literal(PARAMETER_OPEN) + p.arg_name(p.literal(key)) + p.literal('">')
            + value(schema, stops))


def undeclared_parameter(stops: Intruders) -> p.Expr:
    """Match a parameter the schema does not declare (its value typed as whatever JSON it is)."""
    return (p.literal(PARAMETER_OPEN) + p.arg_name(p.regex(r'[^"<>\n]+'))
            + p.literal('">') + value(UNDECLARED, stops))


def call_body(name: str, definition: Mapping[str, Any]) -> p.Expr:
    """Match the ATEM block of one call."""
    properties = p.tool_parameters(definition).get("properties") or {}
    keys = sorted(properties, key=len, reverse=True)
    stops = value_stops(keys)
    params = [parameter(k, properties[k] or {}, stops) for k in keys]
    args = p.zero_or_more(p.space() + p.choice(*params, undeclared_parameter(stops)))
    # The closing tags as the generic tagged calls read them: one left out (an output cut
    # off by max tokens leaves them all out) is read as there, and noted.
    return (p.space() + p.literal("<atem:function_calls>") + p.space()
            + p.literal(f'<atem:invoke name="{name}">') + args
            + closing(CALL_CLOSE[0]) + closing(CALL_CLOSE[1]) + p.space())


def grammar(b: Build) -> p.Expr:
    """Build the whole-output grammar."""
    tools = {p.tool_names([t])[0]: t for t in b.options.tools} if b.options.wants_tools else {}
    routing = Routing(
        message_start="<|start|>assistant",
        header_end="<|message|>",
        terminators=("<|eom|>", "<|eot|>"),
        route=lambda header: destination(header, frozenset(tools)),
        call_body=lambda name: call_body(name, tools[name]),
        extract_reasoning=b.options.extract_reasoning,
        eos_texts=final_eos_texts(b),
    )
    return routed_output(routing)


def prefill(reasoning: str, content: str, with_content: bool) -> str:
    """Write a continued message: reasoning to self, then the answer to the user."""
    text = " to=self<|message|>" + reasoning
    return text + "<|eom|><|start|>assistant to=user<|message|>" + content \
        if with_content else text
