"""Content comparison C1: does the template wrap the assistant's answer in markers?"""

from __future__ import annotations

from analyzer.analysis.context import AnalysisContext
from analyzer.analysis.diff import (
    marker_run_after,
    marker_run_before,
    marker_spans,
    skip_space,
    skip_space_back,
)
from analyzer.analysis.reasoning import in_region, with_reasoning, wrapper_around
from analyzer.analysis.variants import (
    ASSISTANT_MSG,
    TOOLS,
    USER_MSG,
    USER_MSG_2,
    assistant,
    render_input,
    user,
)
from analyzer.model import Comparison, ContentAnalysis, ContentMode, ReasoningAnalysis

C1_TITLE = "C1 content: answer text vs a tool call"
C1R_TITLE = "C1r content: answer text vs reasoning with an empty answer"
C1W_TITLE = "C1w content: answer alone vs answer after reasoning"
C2_TITLE = "C2 turn markers: a final answer vs an answer followed by a user turn"


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
    mode, found = ContentMode.PLAIN, ("", "")
    for cid, title, other in (("C1", C1_TITLE, with_call), ("C1r", C1R_TITLE, with_thought)):
        wrapped = _wrapped(ctx, ctx.compare(cid, title, text_only, other), "a", reasoning_markers)
        if wrapped is not None:
            mode, found = ContentMode.ALWAYS_WRAPPED, wrapped
            break
    if mode == ContentMode.PLAIN and reasoning.mode != "NONE":
        both = render_input("answer after reasoning", [user(), with_reasoning(field_name)],
                            tools=TOOLS)
        comparison = ctx.compare("C1w", C1W_TITLE, text_only, both)
        wrapped = _wrapped(ctx, comparison, "b", reasoning_markers)
        if wrapped is not None:
            mode, found = ContentMode.WRAPPED_WITH_REASONING, wrapped
    turn = compare_turn_markers(ctx, set(found) | reasoning_markers)
    return ContentAnalysis(mode, found[0], found[1], requires_nonnull, *turn)


def compare_turn_markers(ctx: AnalysisContext, taken: set[str]) -> tuple[str, str]:
    """C2: a final answer vs one followed by another user turn; read the turn's markers.

    The turn start is the marker group right before the answer that the generation prompt
    also ends with; the turn end is the marker group right after the answer once another
    turn follows it. Content and reasoning markers are not turn markers.
    """
    final = render_input("answer text", [user(), assistant()], tools=TOOLS)
    followed = render_input("answer, then a user turn", [user(), assistant(), user(USER_MSG_2)],
                            tools=TOOLS)
    comparison = ctx.compare("C2", C2_TITLE, final, followed)
    if comparison.variant_a is None or comparison.variant_b is None:
        return "", ""
    return _turn_start(ctx, comparison, taken), _turn_end(ctx, comparison, taken)


def _after_answer_or_absent(text: str, marker: str) -> bool:
    """A turn end follows the final answer too (maybe after a content end), or is absent."""
    at = text.find(ASSISTANT_MSG)
    after = text[at + len(ASSISTANT_MSG) :]
    return marker not in text or marker in after[: len(marker) + 64]


def _turn_start(ctx: AnalysisContext, comparison: Comparison, taken: set[str]) -> str:
    assert comparison.variant_a is not None
    text = comparison.variant_a.rendered
    at = text.find(ASSISTANT_MSG)
    group = marker_run_before(text, skip_space_back(text, at), trailing_word=True)
    prompt = ctx.renderer.text(render_input("generation prompt", [user()], tools=TOOLS,
                                            add_generation_prompt=True, enable_thinking=None))
    if at < 0 or group is None or prompt is None:
        return ""
    marker = text[group[0] : group[1]]
    if marker in taken or not prompt.rstrip().endswith(marker):
        return ""
    return ctx.mark_a("content.turn_start", marker, comparison.id, group[0])


def _turn_end(ctx: AnalysisContext, comparison: Comparison, taken: set[str]) -> str:
    assert comparison.variant_b is not None
    text = comparison.variant_b.rendered
    at = text.find(ASSISTANT_MSG)
    if at < 0:
        return ""
    group = marker_run_after(text, skip_space(text, at + len(ASSISTANT_MSG)))
    if group is not None and text[group[0] : group[1]] in taken:  # a content end comes first
        group = marker_run_after(text, skip_space(text, group[1]))
    if group is None or text[group[0] : group[1]] in taken:
        return ""
    marker = text[group[0] : group[1]]
    assert comparison.variant_a is not None
    if marker in text[:at] and not _closes_user_turn(text, marker):
        return ""  # it opens the next turn, it does not end this one
    if not _after_answer_or_absent(comparison.variant_a.rendered, marker):
        return ""  # it belongs to what the next turn brings (e.g. a tool list)
    return ctx.mark_b("content.turn_end", marker, comparison.id, group[0])


def _within_diff(text: str, group: tuple[int, int], low: int) -> tuple[int, int]:
    """Drop the part of a marker group before low when the diff starts at a marker in it."""
    # Solar Open's `<|begin|>assistant<|content|>`: the header is shared, `<|content|>` is not.
    if group[0] < low < group[1] and any(start == low for start, _ in marker_spans(text)):
        return low, group[1]
    return group


def _closes_user_turn(text: str, marker: str) -> bool:
    """Tell whether marker also ends the user's turn (right after the user's text)."""
    at = text.find(USER_MSG)
    return at >= 0 and text.startswith(marker, skip_space(text, at + len(USER_MSG)))


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
    # A marker group may run on into the shared suffix (`<|close|>response` + `<|sep|>`).
    if wrap.start is None or wrap.end is None or not low <= wrap.end[0] < high:
        return None
    assert wrap.end is not None
    start_span = _within_diff(text, wrap.start, low)
    other = diff.right if side == "a" else diff.left
    start_text, end_text = text[start_span[0] : start_span[1]], text[wrap.end[0] : wrap.end[1]]
    # The other variant may show the wrapper empty (start in the shared prefix, end first).
    empty_in_other = start_span[1] <= low and other.lstrip().startswith(end_text)
    if not (in_region(start_span, low, high) or empty_in_other):
        return None
    # An end shared with reasoning is a turn end both close with (Solar Open's `<|end|>`);
    # a start shared with reasoning means the "wrapper" is the reasoning block itself.
    if start_text in reasoning_markers:
        return None
    if end_text in other and not empty_in_other:
        return None
    mark = ctx.mark_a if side == "a" else ctx.mark_b
    start = mark("content.start", start_text, comparison.id, start_span[0])
    end = mark("content.end", end_text, comparison.id, wrap.end[0])
    return start, end
