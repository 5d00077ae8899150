"""Functionary v3.2 recipients: `>>>all\nTEXT`, `>>>NAME\n{json}`, the prompt ending in `>>>`.

The template renders calls as recipients, but `all` (the user) as a recipient of text only
appears in its prompt, so this format has a dedicated handler.
"""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator.arguments import arguments_value
from analyzer.generator.build import Build
from analyzer.generator.content import final_eos_texts
from analyzer.generator.routed import Destination, Route, Routing, routed_output


def destination(header: str, names: frozenset[str]) -> Destination:
    """Read a recipient line: a declared function, or anything else as text for the user."""
    name = header.strip()
    if name in names:
        return Destination(Route.CALL, name, header.find(name))
    if name == "all":  # the user
        return Destination(Route.CONTENT)
    # An undeclared recipient stays visible as text rather than vanish.
    return Destination(Route.TEXT, name, header.find(name) if name else -1, tuple(sorted(names)))


def grammar(b: Build) -> p.Expr:
    """Build the whole-output grammar."""
    names = frozenset(p.tool_names(b.options.tools)) if b.options.wants_tools else frozenset()
    routing = Routing(
        message_start=">>>",
        header_end="\n",
        terminators=("<|eot_id|>",),
        route=lambda header: destination(header, names),
        call_body=lambda name: p.space() + arguments_value(python=False) + p.space(),
        extract_reasoning=b.options.extract_reasoning,
        eos_texts=final_eos_texts(b),
    )
    return routed_output(routing)


def prefill(reasoning: str, content: str, with_content: bool) -> str:
    """Write a continued message: text for the user."""
    return "all\n" + content if with_content else ""
