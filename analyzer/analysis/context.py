"""The state one analysis threads through its comparisons: renders, comparisons, markers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.analysis.variants import CallFactory, RenderInput, VariantRenderer, compare_variants
from analyzer.model import Comparison, Marker, Span


@dataclass
class AnalysisContext:
    """Run comparisons once each and record every marker with where it came from."""

    renderer: VariantRenderer
    calls: CallFactory = field(default_factory=CallFactory)
    base_tools: list[dict[str, Any]] | None = None  # tool list for probes not about tools
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    markers: list[Marker] = field(default_factory=list)

    def compare(self, cid: str, title: str, a: RenderInput, b: RenderInput) -> Comparison:
        """Run (or recall) comparison cid between inputs a and b."""
        found = self.comparisons.get(cid)
        if found is None:
            found = compare_variants(self.renderer, cid, title, a, b)
            self.comparisons[cid] = found
        return found

    def record(self, comparison: Comparison) -> None:
        """Keep a comparison that was built elsewhere (e.g. a skipped one)."""
        self.comparisons.setdefault(comparison.id, comparison)

    def mark_b(self, role: str, text: str, cid: str, pos_b: int) -> str:
        """Record marker text found at pos_b in variant B of comparison cid; return text."""
        if text:
            comparison = self.comparisons[cid]
            span_b = _checked_span(_rendered(comparison, "b"), text, pos_b)
            span_a = _mirror(comparison, pos_b, len(text), from_side="b")
            self.markers.append(Marker(role, text, cid, span_a, span_b))
        return text

    def mark_a(self, role: str, text: str, cid: str, pos_a: int) -> str:
        """Record marker text found at pos_a in variant A of comparison cid; return text."""
        if text:
            comparison = self.comparisons[cid]
            span_a = _checked_span(_rendered(comparison, "a"), text, pos_a)
            span_b = _mirror(comparison, pos_a, len(text), from_side="a")
            self.markers.append(Marker(role, text, cid, span_a, span_b))
        return text

    def mark_without_source(self, role: str, text: str, origin: str) -> str:
        """Record a marker that no render shows (set by a workaround)."""
        if text:
            self.markers.append(Marker(role, text, origin, None, None))
        return text


def _rendered(comparison: Comparison, side: str) -> str:
    variant = comparison.variant_a if side == "a" else comparison.variant_b
    return "" if variant is None else variant.rendered


def _checked_span(rendered: str, text: str, pos: int) -> Span:
    if rendered[pos : pos + len(text)] != text:
        raise ValueError(f"marker {text!r} is not at offset {pos} of its render")
    return Span(pos, pos + len(text))


def _mirror(comparison: Comparison, pos: int, length: int, *, from_side: str) -> Span | None:
    """Map a span in one variant to the other when it lies in the common prefix or suffix."""
    diff = comparison.diff
    if diff is None:
        return None
    end = pos + length
    if end <= len(diff.prefix):
        return Span(pos, end)
    own = diff.left if from_side == "a" else diff.right
    other = diff.right if from_side == "a" else diff.left
    suffix_start = len(diff.prefix) + len(own)
    if pos >= suffix_start:
        shift = len(other) - len(own)
        return Span(pos + shift, end + shift)
    return None
