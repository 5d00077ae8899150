"""Dedicated handlers: the few formats a template's renders cannot reveal.

Each handler recognizes its format from the analysis (the renders it holds), and builds the
whole output grammar and the way a continued message is written. Everything else goes
through the generated ("auto") grammar. The three here are recipient-routed formats, built
on `analyzer.generator.routed`; the modules are imported only when their handler runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer import peg as p
from analyzer.model import Analysis

if TYPE_CHECKING:
    from analyzer.generator.build import Build

AUTO = "auto"
Prefill = Callable[[str, str, bool], str]


def renders(analysis: Analysis) -> Iterator[str]:
    """Yield every render the analysis compared."""
    for comparison in analysis.comparisons:
        for variant in (comparison.variant_a, comparison.variant_b):
            if variant is not None and variant.rendered:
                yield variant.rendered


def renders_show(text: str) -> Callable[[Analysis], bool]:
    """Recognize templates some render of which shows text."""
    return lambda analysis: any(text in rendered for rendered in renders(analysis))


def prompts_end_with(text: str) -> Callable[[Analysis], bool]:
    """Recognize templates whose generation prompts all end with text."""
    return lambda analysis: bool(analysis.generation_prompts) and all(
        g.text.endswith(text) for g in analysis.generation_prompts if g.label != "unsupported")


@dataclass(frozen=True)
class Handler:
    """A dedicated handler: its name, the module building it, how it is recognized, why."""

    name: str
    module: str
    recognizes: Callable[[Analysis], bool]
    why: str


HANDLERS: tuple[Handler, ...] = (
    Handler(
        "gpt-oss-channels", "analyzer.handlers.gpt_oss",
        renders_show("<|start|>assistant<|channel|>final<|message|>"),
        "Harmony channels: which channel carries reasoning, answer or a call, and that a "
        "recipient may precede or follow the channel, no render shows.",
    ),
    Handler(
        "functionary-v3.2-recipients", "analyzer.handlers.functionary",
        prompts_end_with(">>>"),
        "Each message opens with a recipient line (`all` or a function); the text recipient "
        "`all` only appears in the prompt, never in a rendered answer.",
    ),
    Handler(
        "muse-atem-recipients", "analyzer.handlers.muse",
        renders_show(" to=self<|message|>"),
        "Recipient routing: `to=self` is reasoning, `to=user` the answer, `to=NAME` a call; an "
        "ATEM block sent to the user is text, so its markers alone cannot tell.",
    ),
)


def choose_handler(analysis: Analysis) -> str:
    """Name the handler for an analysis: the one it names, the first that recognizes it, or
    "auto"."""
    if analysis.handler != AUTO:
        return analysis.handler
    return next((h.name for h in HANDLERS if h.recognizes(analysis)), AUTO)


def handler_named(name: str) -> Handler | None:
    """Return the dedicated handler of that name (None for "auto" or an unknown name)."""
    return next((h for h in HANDLERS if h.name == name), None)


def handler_grammar(name: str, b: Build) -> p.Expr | None:
    """Build the whole-output grammar of the named handler (None for "auto")."""
    handler = handler_named(name)
    if handler is None:
        return None
    grammar: Callable[[Build], p.Expr] = importlib.import_module(handler.module).grammar
    return grammar(b)


def handler_prefill(name: str) -> Prefill | None:
    """Return how the named handler writes a continued message (None for "auto")."""
    handler = handler_named(name)
    if handler is None:
        return None
    prefill: Prefill = importlib.import_module(handler.module).prefill
    return prefill
