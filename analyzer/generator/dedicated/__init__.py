"""Dedicated grammars for the few formats a template's renders cannot reveal.

`analyzer.handlers` declares which templates route to which handler (the analysis records
the name); this package builds the grammar of each named handler. Everything else goes
through the generated ("auto") grammar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from analyzer import peg as p

if TYPE_CHECKING:
    from analyzer.generator.build import Build

GRAMMARS: dict[str, Callable[[Build], p.Expr]] = {}


def dedicated_grammar(name: str, b: Build) -> p.Expr | None:
    """Build the grammar of the named handler (None for "auto" or an unknown name)."""
    builder = GRAMMARS.get(name)
    return builder(b) if builder is not None else None
