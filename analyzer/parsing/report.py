"""A readable plain-text report of an Analysis: caps, modes, markers, variant pairs."""

from __future__ import annotations

import dataclasses
import json

from analyzer.model import Analysis, Comparison, DiffSplit, Marker, RenderMode, Span

CONTEXT = 40  # characters of common text shown around a diff


def quote(text: str) -> str:
    """Show text as a JSON string, so whitespace and control characters are visible."""
    return json.dumps(text, ensure_ascii=False)


def format_report(analysis: Analysis, *, title: str = "") -> str:
    """Render the whole analysis as text."""
    sections = [
        _header(analysis, title),
        _caps(analysis),
        _modes(analysis),
        _prompts(analysis),
        _markers(analysis.markers),
        _comparisons(analysis.comparisons),
    ]
    return "\n\n".join(sections) + "\n"


def _header(analysis: Analysis, title: str) -> str:
    lines = [f"Template: {title}" if title else "Template",
             f"  sha256 {analysis.template_sha256}, template name {quote(analysis.template_name)}",
             f"  analyzer {analysis.analyzer_version}, handler {analysis.handler}",
             f"  workarounds applied: {', '.join(analysis.workarounds) or 'none'}",
             f"  rendered: {_render_mode(analysis)}"]
    return "\n".join(lines)


def _render_mode(analysis: Analysis) -> str:
    if analysis.render_mode == RenderMode.HF:
        return "exactly as transformers does"
    return f"leniently: {analysis.render_note}"


def _caps(analysis: Analysis) -> str:
    lines = ["Capabilities"]
    for field in dataclasses.fields(analysis.caps):
        value = getattr(analysis.caps, field.name)
        shown = ", ".join(value) or "none" if isinstance(value, tuple) else "yes" if value else "no"
        lines.append(f"  {field.name}: {shown}")
    return "\n".join(lines)


def _fields(prefix: str, value: object) -> list[str]:
    lines = []
    for field in dataclasses.fields(value):  # type: ignore[arg-type]
        item = getattr(value, field.name)
        if dataclasses.is_dataclass(item):
            lines.extend(_fields(f"{prefix}{field.name}.", item))
        elif item not in ("", False, (), None):
            shown = quote(item) if isinstance(item, str) else str(item)
            lines.append(f"  {prefix}{field.name}: {shown}")
    return lines


def _modes(analysis: Analysis) -> str:
    tokens = ", ".join(quote(token) for token in analysis.preserved_tokens) or "none"
    lines = ["Reasoning", *_fields("", analysis.reasoning),
             "Content", *_fields("", analysis.content),
             "Tools", *_fields("", analysis.tools),
             f"Preserved tokens: {tokens}"]
    return "\n".join(lines)


def _prompts(analysis: Analysis) -> str:
    lines = ["Generation prompts"]
    for prompt in analysis.generation_prompts:
        setting = "unset" if prompt.enable_thinking is None else str(prompt.enable_thinking).lower()
        lines.append(f"  enable_thinking={setting}: {quote(prompt.text)} ({prompt.label})")
    return "\n".join(lines)


def _span(span: Span | None) -> str:
    return "-" if span is None else f"[{span.start}:{span.end}]"


def _markers(markers: tuple[Marker, ...]) -> str:
    lines = ["Markers (role, text, comparison, span in A, span in B)"]
    for marker in markers:
        lines.append(f"  {marker.role}: {quote(marker.text)} from {marker.comparison} "
                     f"A{_span(marker.span_a)} B{_span(marker.span_b)}")
    return "\n".join(lines)


def show_diff(diff: DiffSplit, middle: str) -> str:
    """Show one side of a diff: elided common text around the differing part in brackets."""
    before = diff.prefix[-CONTEXT:]
    after = diff.suffix[:CONTEXT]
    head = "..." if len(diff.prefix) > CONTEXT else ""
    tail = "..." if len(diff.suffix) > CONTEXT else ""
    return f"{head}{quote(before)[1:-1]}[[{quote(middle)[1:-1]}]]{quote(after)[1:-1]}{tail}"


def _comparisons(comparisons: tuple[Comparison, ...]) -> str:
    lines = ["Comparisons (differing text in [[ ]], common text elided)"]
    for comparison in comparisons:
        lines.append(f"  {comparison.title} [{comparison.status}]")
        if comparison.note:
            lines.append(f"    note: {comparison.note}")
        if comparison.diff is not None and comparison.variant_a and comparison.variant_b:
            lines.append(f"    A {comparison.variant_a.label}: "
                         f"{show_diff(comparison.diff, comparison.diff.left)}")
            lines.append(f"    B {comparison.variant_b.label}: "
                         f"{show_diff(comparison.diff, comparison.diff.right)}")
    return "\n".join(lines)
