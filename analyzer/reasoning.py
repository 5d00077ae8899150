"""Reasoning comparisons R1-R3 and the generation prompts per enable_thinking setting."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.context import AnalysisContext
from analyzer.diff import (
    common_prefix_len,
    marker_run_after,
    marker_run_before,
    skip_space,
    skip_space_back,
)
from analyzer.model import Comparison, GenerationPrompt, ReasoningAnalysis, ReasoningMode
from analyzer.variants import (
    ASSISTANT_MSG,
    REASONING_MSG,
    TOOLS,
    RenderInput,
    assistant,
    compare_variants,
    render_input,
    skipped,
    user,
)

# Templates name the reasoning field differently; the first one a template shows wins.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

FORCED_OPEN_LABEL = "forced-open"
CLOSED_LABEL = "closed"
OPEN_CHOICE_LABEL = "model's choice"


@dataclass(frozen=True)
class Wrapper:
    """Marker groups found right before and right after a needle in one render."""

    start: tuple[int, int] | None
    end: tuple[int, int] | None


def wrapper_around(text: str, begin: int, finish: int) -> Wrapper:
    """Find the marker group before text[begin:finish] and the one after, across whitespace."""
    return Wrapper(
        marker_run_before(text, skip_space_back(text, begin)),
        marker_run_after(text, skip_space(text, finish)),
    )


def in_region(span: tuple[int, int] | None, low: int, high: int) -> bool:
    """Tell whether span lies inside [low, high)."""
    return span is not None and low <= span[0] and span[1] <= high


def with_reasoning(field_name: str, content: str | None = ASSISTANT_MSG) -> dict[str, object]:
    """Build an assistant message carrying REASONING_MSG under field_name."""
    message = assistant(content)
    message[field_name] = REASONING_MSG
    return message


def analyze_reasoning(ctx: AnalysisContext, supports_tool_calls: bool) -> ReasoningAnalysis:
    """Run R1 (presence), R2 (enable_thinking) and R3 (scope) and combine them."""
    found = compare_reasoning_presence(ctx)
    found = compare_thinking_enabled(ctx, found)
    if supports_tool_calls:
        found = compare_reasoning_scope(ctx, found)
    else:
        ctx.record(skipped("R3", R3_TITLE, "the template does not render tool calls"))
    return found


def compare_reasoning_presence(ctx: AnalysisContext) -> ReasoningAnalysis:
    """R1: an assistant message without vs with reasoning; read the markers around it."""
    tools = ctx.base_tools
    base = render_input("without reasoning", [user(), assistant()], tools=tools)
    for field_name in REASONING_FIELDS:
        other = render_input(f"with {field_name}", [user(), with_reasoning(field_name)],
                             tools=tools)
        comparison = compare_variants(ctx.renderer, "R1", R1_TITLE, base, other)
        if comparison.diff is not None and REASONING_MSG in comparison.diff.right:
            ctx.record(comparison)
            return _markers_from_presence(ctx, comparison)
    ctx.compare("R1", R1_TITLE, base, render_input(f"with {REASONING_FIELDS[0]}",
                [user(), with_reasoning(REASONING_FIELDS[0])], tools=tools))
    return ReasoningAnalysis()


R1_TITLE = "R1 reasoning presence: assistant message without vs with reasoning"
R2_TITLE = "R2 thinking toggle: generation prompt with enable_thinking false vs true"
R3_TITLE = "R3 reasoning scope: reasoning next to text vs next to a tool call"


def _markers_from_presence(ctx: AnalysisContext, comparison: Comparison) -> ReasoningAnalysis:
    assert comparison.variant_b is not None and comparison.diff is not None
    text_b = comparison.variant_b.rendered
    pos = text_b.find(REASONING_MSG, len(comparison.diff.prefix))
    wrap = wrapper_around(text_b, pos, pos + len(REASONING_MSG))
    low, high = len(comparison.diff.prefix), len(text_b) - len(comparison.diff.suffix)
    start_new, end_new = in_region(wrap.start, low, high), in_region(wrap.end, low, high)
    if wrap.end is None or not (end_new or _empty_block_in_a(comparison, wrap)):
        return ReasoningAnalysis()
    end = ctx.mark_b("reasoning.end", text_b[wrap.end[0] : wrap.end[1]], "R1", wrap.end[0])
    if wrap.start is not None and start_new == end_new:
        start_text = text_b[wrap.start[0] : wrap.start[1]]
        start = ctx.mark_b("reasoning.start", start_text, "R1", wrap.start[0])
        return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, end, _field_of(comparison))
    return ReasoningAnalysis(ReasoningMode.DELIMITER, "", end, _field_of(comparison))


def _field_of(comparison: Comparison) -> str:
    assert comparison.variant_b is not None
    return comparison.variant_b.label.removeprefix("with ")


def _empty_block_in_a(comparison: Comparison, wrap: Wrapper) -> bool:
    """Tell whether A already shows the start and end markers as an empty block."""
    if wrap.start is None or wrap.end is None or comparison.variant_a is None:
        return False
    text_b = comparison.variant_b.rendered if comparison.variant_b else ""
    block = text_b[wrap.start[0] : wrap.start[1]], text_b[wrap.end[0] : wrap.end[1]]
    text_a = comparison.variant_a.rendered
    at = text_a.find(block[0])
    return at >= 0 and text_a.startswith(block[1], skip_space(text_a, at + len(block[0])))


def generation_input(
    ctx: AnalysisContext, enable_thinking: bool | None, with_prompt: bool
) -> RenderInput:
    """Render input for a lone user turn, with or without the generation prompt."""
    state = "unset" if enable_thinking is None else str(enable_thinking).lower()
    label = f"enable_thinking={state}, add_generation_prompt={str(with_prompt).lower()}"
    return render_input(label, [user()], tools=ctx.base_tools, add_generation_prompt=with_prompt,
                        enable_thinking=enable_thinking)


def generation_prompt_text(ctx: AnalysisContext, enable_thinking: bool | None) -> str | None:
    """Return what add_generation_prompt appends for this enable_thinking setting."""
    full = ctx.renderer.text(generation_input(ctx, enable_thinking, True))
    bare = ctx.renderer.text(generation_input(ctx, enable_thinking, False))
    if full is None or bare is None:
        return None
    return full[common_prefix_len(full, bare) :]


def compare_thinking_enabled(ctx: AnalysisContext, found: ReasoningAnalysis) -> ReasoningAnalysis:
    """R2: enable_thinking false vs true with a generation prompt; detect forced modes."""
    comparison = ctx.compare("R2", R2_TITLE, generation_input(ctx, False, True),
                             generation_input(ctx, True, True))
    if comparison.status != "ok":
        return found
    if not found.start and not found.end:
        found = _markers_from_toggle(ctx, comparison, found)
    return _forced_mode(ctx, found)


def _markers_from_toggle(
    ctx: AnalysisContext, comparison: Comparison, found: ReasoningAnalysis
) -> ReasoningAnalysis:
    """Read markers off the toggle alone: a trailing start, or an empty block, in the diff."""
    assert comparison.diff is not None and comparison.variant_a and comparison.variant_b
    diff = comparison.diff
    text_a, text_b = comparison.variant_a.rendered, comparison.variant_b.rendered
    low = len(diff.prefix)
    closed = _empty_block(text_a, low, len(text_a) - len(diff.suffix))
    opened = marker_run_before(text_b, skip_space_back(text_b, len(text_b)))
    if closed is not None:
        (s0, s1), (e0, e1) = closed
        start = ctx.mark_a("reasoning.start", text_a[s0:s1], "R2", s0)
        end = ctx.mark_a("reasoning.end", text_a[e0:e1], "R2", e0)
        return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, end, found.field)
    if in_region(opened, low, len(text_b)) and opened is not None:
        start = ctx.mark_b("reasoning.start", text_b[opened[0] : opened[1]], "R2", opened[0])
        return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, "", found.field)
    return found


def _empty_block(text: str, low: int, high: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Find `start ws end` (two marker groups) inside text[low:high]."""
    first = marker_run_after(text, skip_space(text, low, high))
    if first is None or first[1] > high:
        return None
    second = marker_run_after(text, skip_space(text, first[1], high))
    if second is None or second[1] > high:
        return None
    return first, second


def _forced_mode(ctx: AnalysisContext, found: ReasoningAnalysis) -> ReasoningAnalysis:
    if not found.start:
        return found
    on, off = generation_prompt_text(ctx, True), generation_prompt_text(ctx, False)
    if on is None or prompt_label(on, found) != FORCED_OPEN_LABEL:
        return found
    closed_when_off = off is not None and prompt_label(off, found) == CLOSED_LABEL
    mode = ReasoningMode.FORCED_CLOSED if closed_when_off else ReasoningMode.FORCED_OPEN
    return ReasoningAnalysis(mode, found.start, found.end, found.field)


def prompt_label(prompt: str, found: ReasoningAnalysis) -> str:
    """Label a generation prompt: forced-open, closed, or the model's choice."""
    tail = prompt.rstrip()
    if found.start and tail.endswith(found.start):
        return FORCED_OPEN_LABEL
    if found.end and tail.endswith(found.end):
        return CLOSED_LABEL
    return OPEN_CHOICE_LABEL


def generation_prompts(
    ctx: AnalysisContext, found: ReasoningAnalysis
) -> tuple[GenerationPrompt, ...]:
    """Report the generation prompt for enable_thinking unset, true and false."""
    prompts = []
    for setting in (None, True, False):
        text = generation_prompt_text(ctx, setting)
        label = "unsupported" if text is None else prompt_label(text, found)
        prompts.append(GenerationPrompt(setting, text or "", label))
    return tuple(prompts)


def compare_reasoning_scope(ctx: AnalysisContext, found: ReasoningAnalysis) -> ReasoningAnalysis:
    """R3: reasoning next to text vs next to a tool call; detect TOOLS_ONLY."""
    field_name = found.field or REASONING_FIELDS[0]
    with_call = with_reasoning(field_name, None)
    with_call["tool_calls"] = [ctx.calls.call()]
    comparison = ctx.compare(
        "R3", R3_TITLE,
        render_input("reasoning and text", [user(), with_reasoning(field_name)], tools=TOOLS),
        render_input("reasoning and a tool call", [user(), with_call], tools=TOOLS),
    )
    if comparison.status != "ok" or found.mode != ReasoningMode.NONE:
        return found
    assert comparison.variant_a is not None and comparison.variant_b is not None
    text_b = comparison.variant_b.rendered
    if REASONING_MSG in comparison.variant_a.rendered or REASONING_MSG not in text_b:
        return found
    pos = text_b.find(REASONING_MSG)
    wrap = wrapper_around(text_b, pos, pos + len(REASONING_MSG))
    if wrap.end is None:
        return found
    end = ctx.mark_b("reasoning.end", text_b[wrap.end[0] : wrap.end[1]], "R3", wrap.end[0])
    start = ""
    if wrap.start is not None:
        start = ctx.mark_b("reasoning.start", text_b[wrap.start[0] : wrap.start[1]], "R3",
                           wrap.start[0])
    return ReasoningAnalysis(ReasoningMode.TOOLS_ONLY, start, end, field_name)

