"""Which parser handler an analysis routes to: "auto" (generated from the markers) or a
dedicated, hand-written one for a format a template cannot reveal by rendering.

A dedicated handler is declared here by name with a predicate on the template source (and the
finished analysis); the parser generator implements a handler of that name. Keep the list
short: every entry is a format the differential mechanism could not express. Candidates
named in issue 3: GPT-OSS channels (source has `<|channel|>` and `<|start|>assistant`) and
Functionary v3.2 recipients (source has `>>>all`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from analyzer.model import Analysis

AUTO_HANDLER = "auto"


@dataclass(frozen=True)
class DedicatedHandler:
    """A hand-written parser the analysis routes to when its predicate holds."""

    name: str
    applies: Callable[[str, Analysis], bool]
    why: str


# Empty until the parser generator implements a dedicated handler; the first match wins.
DEDICATED_HANDLERS: tuple[DedicatedHandler, ...] = ()


def choose_handler(
    source: str, analysis: Analysis, handlers: tuple[DedicatedHandler, ...] = DEDICATED_HANDLERS
) -> str:
    """Name the handler for this template: the first dedicated one that applies, else auto."""
    for handler in handlers:
        if handler.applies(source, analysis):
            return handler.name
    return AUTO_HANDLER
