"""Stream runs from a value read up to its closing marker (`until(MARKER)` then MARKER:
MiniMax-M3's nested tag values, `arg-json-value<until("]<]minimax[>[</tags>...")>`),
decided by the regexes as `regexrun` decides a value read as text.

Such a value holds any text but its marker (markup, `<`, `]`), so regexrun's value segment,
which reads a text without the value's lead characters, does not read it; `Until` waits in a
plainer way: where its marker is not in the text, before the longest tail that begins the
marker (`held_back`), whatever comes before it. So a text is decided by where the marker is:
- not in it: the value reads on to the end, short of the tail that begins the marker (the
  key holds that tail's text and whether the value is empty); the text ends here;
- in it: the value ends there, the marker is read whole, and regexrun's segments read on
  (the argument loop, the call's closing, the loop of calls).

A value the tree would remember a rescan place for (`RESCAN_LIMIT` characters read and held
back: the memo is no longer empty) runs the tree. The builder is registered after regexrun's
and regexjson's; it reads only points whose first item is such a capture.
"""

from __future__ import annotations

from typing import Any

from analyzer.generator import regexrun
from analyzer.parsing.stream import SHAPE_BUILDERS
from analyzer.peg.captures import Capture, UntilCapture
from analyzer.peg.expressions import RESUME_DEPENDENTS, Expr
from analyzer.peg.scanning import RESCAN_LIMIT, Literal, Until, held_back


class UntilSegment:
    """A value up to its marker begun at the head of the point, then the marker: ended
    before a tail that begins the marker (ENDED), or the marker whole and the next segment
    reads on."""

    __slots__ = ("marker", "markers")

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.markers = (marker,)

    def read(self, text: str, pos: int, n: int, spans: list[tuple[int, int]],
             key: list[Any], fixed: list[int]) -> int:
        marker = self.marker
        found = text.find(marker, pos)
        if found >= 0:
            end = found + len(marker)
            fixed.append(len(spans) + 1)
            spans += ((pos, found), (found, end))
            key += ("until closed", found == pos)
            return end
        safe = n - held_back(text, pos, n, self.markers)
        if safe - pos > RESCAN_LIMIT:
            return regexrun.OTHER  # the tree keeps a rescan place in the memo
        fixed.append(len(spans) + 1)
        spans += ((pos, safe), (safe, n))
        key += ("until", safe == pos, text[safe:])
        return regexrun.ENDED


def _until_value(items: list[Any]) -> str | None:
    """The marker of a value read up to it and then read (None: other items)."""
    if len(items) < 2:
        return None
    head, after = items[:2]
    kind = type(head)
    if (kind is not Capture and kind is not UntilCapture) or type(head.item) is not Until:
        return None
    markers = head.item.markers
    if len(markers) != 1 or type(after) is not Literal or after.text != markers[0]:
        return None
    return markers[0]


def _build(point: Expr) -> regexrun.Shapes | None:
    """The shapes of a point headed by such a value: its segment, then what regexrun's
    segments read after the marker; told from the point's first items at once (a point
    without shapes is asked again at every run)."""
    if point in REFUSED:
        return None
    head = type(regexrun.first_item(point))
    items = regexrun._opened(regexrun.flat_items(point)) if head is Capture \
        or head is UntilCapture else []
    marker = _until_value(items)
    if marker is None:
        if len(REFUSED) >= regexrun.BUILT_KEPT:
            REFUSED.clear()
        REFUSED[point] = None
        return None
    return regexrun.Shapes((UntilSegment(marker), *regexrun._segments(items[2:])))


# Points refused by their first items (as regexjson's: asked again at every run otherwise).
REFUSED: dict[Any, None] = {}
RESUME_DEPENDENTS.append(REFUSED)

SHAPE_BUILDERS.append(_build)
