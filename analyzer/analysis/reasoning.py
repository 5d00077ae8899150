"""Reasoning comparisons R1-R3 and the generation prompts per enable_thinking setting."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from analyzer.analysis.context import AnalysisContext
from analyzer.analysis.diff import (
    common_prefix_len,
    is_marker_group,
    marker_run_after,
    marker_run_before,
    skip_space,
    skip_space_back,
)
from analyzer.analysis.variants import (
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
from analyzer.model import Comparison, GenerationPrompt, ReasoningAnalysis, ReasoningMode

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
        marker_run_before(text, skip_space_back(text, begin), trailing_word=True),
        marker_run_after(text, skip_space(text, finish)),
    )


def in_region(span: tuple[int, int] | None, low: int, high: int) -> bool:
    """Tell whether span lies inside [low, high)."""
    return span is not None and low <= span[0] and span[1] <= high


def with_reasoning(field_name: str, content: str | None = ASSISTANT_MSG) -> dict[str, object]:
    """Build an assistant message carrying REASONING_MSG under field_name."""
    if field_name == CHUNK_FIELD:
        return thinking_chunks(content or "")
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
    chunks = render_input(f"with {CHUNK_FIELD}", [user(), thinking_chunks()], tools=tools)
    comparison = compare_variants(ctx.renderer, "R1", R1_TITLE, base, chunks)
    if comparison.diff is not None and _shows_chunk_text(comparison.diff.right):
        ctx.record(comparison)
        return _markers_from_presence(ctx, comparison)
    first = render_input(f"with {REASONING_FIELDS[0]}",
                         [user(), with_reasoning(REASONING_FIELDS[0])], tools=tools)
    ctx.compare("R1", R1_TITLE, base, first)
    return ReasoningAnalysis()


def _shows_chunk_text(text: str) -> bool:
    """Tell whether a render shows the thinking chunk's text, not the chunk printed raw."""
    return REASONING_MSG in text and "'type'" not in text and '"type"' not in text


# Mistral's templates take reasoning as a typed content chunk instead of a message field.
CHUNK_FIELD = "content[type=thinking]"


def thinking_chunks(content: str = ASSISTANT_MSG) -> dict[str, object]:
    """Build an assistant message whose content is a thinking chunk then a text chunk."""
    chunks = [{"type": "thinking", "thinking": REASONING_MSG}, {"type": "text", "text": content}]
    return {"role": "assistant", "content": chunks}


R1_TITLE = "R1 reasoning presence: assistant message without vs with reasoning"
R2_TITLE = "R2 thinking toggle: generation prompt with enable_thinking false vs true"
R3_TITLE = "R3 reasoning scope: reasoning next to text vs next to a tool call"


def _markers_from_presence(ctx: AnalysisContext, comparison: Comparison) -> ReasoningAnalysis:
    """Read start/end around the reasoning text; a start already shown without reasoning
    (and not as an empty block) is the role header, so the mode is DELIMITER."""
    assert comparison.variant_b is not None and comparison.diff is not None
    text_b = comparison.variant_b.rendered
    pos = text_b.find(REASONING_MSG, len(comparison.diff.prefix))
    wrap = wrapper_around(text_b, pos, pos + len(REASONING_MSG))
    low, high = len(comparison.diff.prefix), len(text_b) - len(comparison.diff.suffix)
    if wrap.start is not None and not in_region(wrap.start, low, high):
        wrap = Wrapper(_clipped_start(text_b, wrap.start, low), wrap.end)
    start_new, end_new = in_region(wrap.start, low, high), in_region(wrap.end, low, high)
    empty_block = _empty_block_in_a(comparison, wrap)
    if wrap.end is None or not (end_new or start_new or empty_block):
        return ReasoningAnalysis()
    end = ctx.mark_b("reasoning.end", text_b[wrap.end[0] : wrap.end[1]], "R1", wrap.end[0])
    after_end = _header_after_end(ctx, text_b, wrap.end[1], high)
    if wrap.start is not None and (start_new or empty_block):
        start_text = text_b[wrap.start[0] : wrap.start[1]]
        start = ctx.mark_b("reasoning.start", start_text, "R1", wrap.start[0])
        return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, end, _field_of(comparison),
                                 after_end)
    return ReasoningAnalysis(ReasoningMode.DELIMITER, "", end, _field_of(comparison), after_end)


def _header_after_end(ctx: AnalysisContext, text: str, end: int, high: int) -> str:
    """The marker group the reasoning adds after its end, before the shared answer."""
    # Only what the reasoning brings (inside R1's diff) and nothing but one marker group:
    # a new turn header such as `<|begin|>assistant`, not text.
    at = skip_space(text, end, high)
    stop = skip_space_back(text, high, at)
    if at >= stop or marker_run_after(text, at) is None or not is_marker_group(text[at:stop]):
        return ""
    return ctx.mark_b("reasoning.after_end", text[at:stop], "R1", at)


def _clipped_start(text: str, group: tuple[int, int], low: int) -> tuple[int, int]:
    """Keep only the last marker of a group that begins before the diff but ends inside it."""
    last = marker_run_before(text, group[1], with_word=False)
    return last if last is not None and last[0] >= low else group


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
    if not found.start and not found.end:
        found = _markers_from_open_prompt(ctx, comparison, found)
    return _forced_mode(ctx, found)


def _tail_group(text: str, end: int) -> tuple[int, int] | None:
    """The marker group that ends text[:end], ignoring trailing whitespace."""
    return marker_run_before(text, skip_space_back(text, end), trailing_word=True)


def _markers_from_toggle(
    ctx: AnalysisContext, comparison: Comparison, found: ReasoningAnalysis
) -> ReasoningAnalysis:
    """Read markers off the two generation prompts: thinking off closes a block, on opens it."""
    assert comparison.diff is not None and comparison.variant_a and comparison.variant_b
    diff = comparison.diff
    off, on = comparison.variant_a.rendered, comparison.variant_b.rendered
    low = len(diff.prefix)
    end_off = _tail_group(off, len(off))
    start_on = _tail_group(on, len(on))
    if not in_region(end_off, low, len(off) - len(diff.suffix)) or end_off is None:
        return found
    start_off = _tail_group(off, end_off[0])
    same_start = start_off is not None and start_on is not None and (
        off[start_off[0] : start_off[1]] == on[start_on[0] : start_on[1]])
    if start_off is not None and (start_off[0] >= low or same_start):
        start = ctx.mark_a("reasoning.start", off[start_off[0] : start_off[1]], "R2", start_off[0])
    elif start_on is not None and start_on[0] >= low:
        start = ctx.mark_b("reasoning.start", on[start_on[0] : start_on[1]], "R2", start_on[0])
    else:
        return found
    end = ctx.mark_a("reasoning.end", off[end_off[0] : end_off[1]], "R2", end_off[0])
    return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, end, found.field)


def closing_form(marker: str) -> str:
    """Derive the closer of an opening tag: `<x ...>` gives `</x>`, `[X]` gives `[/X]`."""
    if re.fullmatch(r"<[A-Za-z][\w:.-]*(?:\s[^<>]*)?>", marker):
        return "</" + re.split(r"[\s>]", marker[1:], maxsplit=1)[0] + ">"
    if re.fullmatch(r"\[[A-Za-z][\w ]*\]", marker):
        return "[/" + marker[1:]
    return ""


def _markers_from_open_prompt(
    ctx: AnalysisContext, comparison: Comparison, found: ReasoningAnalysis
) -> ReasoningAnalysis:
    """A prompt that ends with an opening tag whose closer the template knows opens reasoning."""
    assert comparison.variant_b is not None
    on = comparison.variant_b.rendered
    prompt = generation_prompt_text(ctx, True)
    start_on = _tail_group(on, len(on))
    if prompt is None or start_on is None or start_on[0] < len(on) - len(prompt):
        return found
    start_text = on[start_on[0] : start_on[1]]
    end_text = closing_form(start_text)
    if not end_text or end_text not in ctx.renderer.template.source:
        return found
    start = ctx.mark_b("reasoning.start", start_text, "R2", start_on[0])
    ctx.mark_without_source("reasoning.end", end_text, "R2:derived-closer")
    return ReasoningAnalysis(ReasoningMode.TAG_BASED, start, end_text, found.field)


def _forced_mode(ctx: AnalysisContext, found: ReasoningAnalysis) -> ReasoningAnalysis:
    if not found.start:
        return found
    on, off = generation_prompt_text(ctx, True), generation_prompt_text(ctx, False)
    if on is None or prompt_label(on, found) != FORCED_OPEN_LABEL:
        return found
    closed_when_off = off is not None and prompt_label(off, found) == CLOSED_LABEL
    mode = ReasoningMode.FORCED_CLOSED if closed_when_off else ReasoningMode.FORCED_OPEN
    return dataclasses.replace(found, mode=mode)


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

