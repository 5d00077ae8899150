"""GPT-OSS (harmony) channels: `<|channel|>analysis<|message|>...<|end|>`, calls by recipient.

    <|channel|>analysis<|message|>REASONING<|end|>
    <|start|>assistant to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>
        {...}<|call|>
    <|start|>assistant<|channel|>final<|message|>CONTENT<|return|>

The template shows the channels but not which one a model picks for what, nor that a
recipient may sit before or after the channel; so this format has a dedicated handler.
"""

from __future__ import annotations

import re

from analyzer import peg as p
from analyzer.generator.arguments import arguments_value
from analyzer.generator.build import Build
from analyzer.generator.content import final_eos_texts
from analyzer.generator.routed import Destination, Route, Routing, routed_output

RECIPIENT = re.compile(r"to=([^\s<]+)")
CHANNEL = re.compile(r"<\|channel\|>(\w+)")
FUNCTIONS = "functions."
REPLY_RECIPIENTS = ("assistant", "user", "all")


def destination(header: str, names: frozenset[str]) -> Destination:
    """Read a header: a function recipient, a built-in tool, or the last channel named."""
    recipient = RECIPIENT.search(header)
    if recipient is not None and recipient.group(1) not in REPLY_RECIPIENTS:
        target = recipient.group(1)
        name = target.removeprefix(FUNCTIONS)
        if target.startswith(FUNCTIONS) and name in names:
            return Destination(Route.CALL, name, recipient.start(1) + len(FUNCTIONS))
        if target in names:  # a declared function without its namespace: read, and noted
            return Destination(Route.CALL, name, recipient.start(1), missing_namespace=FUNCTIONS)
        if target.startswith(FUNCTIONS):
            # An undeclared function: visible as text.
            at = recipient.start(1) + len(FUNCTIONS)
            return Destination(Route.TEXT, name, at, tuple(sorted(names)))
        # A built-in tool (`container.exec`, `python`): not the request's, and llama.cpp's
        # tests expect its message in neither content nor calls.
        return Destination(Route.DROP)
    channels = CHANNEL.findall(header)
    if channels and channels[-1] == "analysis":
        return Destination(Route.REASONING)
    return Destination(Route.CONTENT)


def grammar(b: Build) -> p.Expr:
    """Build the whole-output grammar."""
    names = frozenset(p.tool_names(b.options.tools)) if b.options.wants_tools else frozenset()
    routing = Routing(
        message_start="<|start|>assistant",
        header_end="<|message|>",
        terminators=("<|end|>", "<|call|>", "<|return|>"),
        route=lambda header: destination(header, names),
        call_body=lambda name: p.space() + arguments_value(python=False) + p.space(),
        extract_reasoning=b.options.extract_reasoning,
        eos_texts=final_eos_texts(b),
    )
    return routed_output(routing)


def prefill(reasoning: str, content: str, with_content: bool) -> str:
    """Write a continued message as the model would: analysis, then the final channel."""
    text = "<|channel|>analysis<|message|>" + reasoning
    return text + "<|end|><|start|>assistant<|channel|>final<|message|>" + content \
        if with_content else text
