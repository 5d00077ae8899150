"""Markers in a grammar: their exact inner text, with optional whitespace around them.

The analysis trims markers, and a model that spaces its markup a little differently from
the template still fits.
"""

from __future__ import annotations

from analyzer.gbnf.builder import chars, seq


def spaced_marker(ws: str, text: str, *, lead: bool = True, trail: bool = True) -> str:
    """Match a marker's text exactly, with the whitespace rule ws around it.

    lead/trail False glue that edge to what comes next (a prefix to the name after it),
    unless the marker text itself has whitespace there.
    """
    core = text.strip()
    if not core:
        return ws if text else ""
    before = ws if lead or text[0].isspace() else ""
    after = ws if trail or text[-1].isspace() else ""
    return seq(before, chars(core), after)
