"""Content comparison C1: does the template wrap the assistant's answer in markers?"""

from __future__ import annotations

from analyzer.context import AnalysisContext
from analyzer.model import Comparison, ContentAnalysis, ContentMode, ReasoningAnalysis
from analyzer.reasoning import in_region, with_reasoning, wrapper_around
from analyzer.variants import ASSISTANT_MSG, TOOLS, assistant, render_input, user

C1_TITLE = "C1 content: answer text vs a tool call"
C1R_TITLE = "C1r content: answer text vs reasoning with an empty answer"
C1W_TITLE = "C1w content: answer alone vs answer after reasoning"


def analyze_content(
    ctx: AnalysisContext, reasoning: ReasoningAnalysis, requires_nonnull: bool
) -> ContentAnalysis:
    """Find content wrappers that appear around the answer and nowhere else."""
    text_only = render_input("answer text", [user(), assistant()], tools=TOOLS)
    with_call = render_input("a tool call", [user(), assistant("", tool_calls=[ctx.calls.call()])],
                             tools=TOOLS)
    field_name = reasoning.field or "reasoning_content"
    with_thought = render_input("reasoning, empty answer", [user(), with_reasoning(field_name, "")],
                                tools=TOOLS)
    reasoning_markers = {reasoning.start, reasoning.end} - {""}
    for cid, title, other in (("C1", C1_TITLE, with_call), ("C1r", C1R_TITLE, with_thought)):
        found = _wrapped(ctx, ctx.compare(cid, title, text_only, other), "a", reasoning_markers)
        if found is not None:
            return ContentAnalysis(ContentMode.ALWAYS_WRAPPED, *found, requires_nonnull)
    if reasoning.mode != "NONE":
        both = render_input("answer after reasoning", [user(), with_reasoning(field_name)],
                            tools=TOOLS)
        comparison = ctx.compare("C1w", C1W_TITLE, text_only, both)
        found = _wrapped(ctx, comparison, "b", reasoning_markers)
        if found is not None:
            return ContentAnalysis(ContentMode.WRAPPED_WITH_REASONING, *found, requires_nonnull)
    return ContentAnalysis(requires_nonnull_content=requires_nonnull)


def _wrapped(
    ctx: AnalysisContext, comparison: Comparison, side: str, reasoning_markers: set[str]
) -> tuple[str, str] | None:
    """Return (start, end) markers around the answer if both lie in that side's diff.

    A marker that the other variant also writes in its own diff (an end-of-message token),
    or that is a reasoning marker, does not wrap content.
    """
    if comparison.diff is None or comparison.variant_a is None or comparison.variant_b is None:
        return None
    diff = comparison.diff
    variant = comparison.variant_a if side == "a" else comparison.variant_b
    own = diff.left if side == "a" else diff.right
    text = variant.rendered
    low, high = len(diff.prefix), len(diff.prefix) + len(own)
    pos = text.find(ASSISTANT_MSG, low)
    if pos < 0 or pos + len(ASSISTANT_MSG) > high:
        return None
    wrap = wrapper_around(text, pos, pos + len(ASSISTANT_MSG))
    if not (in_region(wrap.start, low, high) and in_region(wrap.end, low, high)):
        return None
    assert wrap.start is not None and wrap.end is not None
    other = diff.right if side == "a" else diff.left
    start_text, end_text = text[wrap.start[0] : wrap.start[1]], text[wrap.end[0] : wrap.end[1]]
    if end_text in other or start_text in reasoning_markers or end_text in reasoning_markers:
        return None
    mark = ctx.mark_a if side == "a" else ctx.mark_b
    start = mark("content.start", start_text, comparison.id, wrap.start[0])
    end = mark("content.end", end_text, comparison.id, wrap.end[0])
    return start, end
