"""The reasoning part of a grammar: `start reasoning end`, or reasoning up to a delimiter.

The parser reads the generation prompt's tail first, so a prompt that opens `<think>` makes
the output start inside reasoning with no special case here. Reasoning that is never closed
stays reasoning (the model ran out of budget); a tool call the model starts without closing
its reasoning ends the reasoning, but only if the calls run to the end of the output
(a call merely mentioned while thinking stays in the reasoning).
"""

from __future__ import annotations

import re

from analyzer import peg as p
from analyzer.analysis.diff import segmentize_markers
from analyzer.generator.build import Build, kept, text_loop
from analyzer.generator.calls import CallGrammar
from analyzer.model import SegmentKind

# The fixed label after a reasoning start token (a channel name: `thought`, `analysis`).
LABEL = re.compile(r"[A-Za-z_]+")


def reasoning_text(b: Build, calls_to_end: p.Expr | None, triggers: tuple[str, ...]) -> p.Expr:
    """Capture reasoning up to the end marker (or calls that run to the end of the output,
    with the answer's markup the template writes before them)."""
    if calls_to_end is None or not triggers:
        return p.reasoning(p.until(b.reasoning_end))
    lead_in = answer_markup(b)
    stops = (b.reasoning_end, *triggers, *lead_in)
    at_trigger = p.reasoning(p.literals((*triggers, *lead_in)))
    return text_loop(p.reasoning, stops, at_trigger, calls_after_markup(b, calls_to_end))


def answer_markup(b: Build) -> tuple[str, ...]:
    """Return the markers a template writes between the reasoning and the answer (the
    header after the reasoning end, content wrappers, turn markers), but not the end."""
    markup = kept(b.analysis.reasoning.after_end, *b.structural)
    return tuple(m for m in markup if m != b.reasoning_end)


def calls_after_markup(b: Build, calls_to_end: p.Expr) -> p.Expr:
    """Match calls that run to the end, after any of the answer's markup."""
    markup = answer_markup(b)
    if not markup:
        return calls_to_end
    return p.zero_or_more(p.space() + p.literals(markup)) + p.space() + calls_to_end


def reasoning_block(b: Build, calls: CallGrammar | None, calls_to_end: p.Expr | None,
                    nested: bool = False) -> p.Expr:
    """Match `start reasoning [end]`, committed once the start marker is seen (nested: a
    block between pieces of content, the text after it kept verbatim)."""
    triggers = calls.triggers if calls is not None else ()
    closing = p.literal(b.reasoning_end)
    closing += p.space() + after_end(b) if not nested else header_after_end(b)
    if calls_to_end is not None and triggers:
        # Calls the model starts without closing its reasoning end it: read, and noted.
        unclosed = p.noted(p.peek(calls_after_markup(b, calls_to_end)), "unclosed_reasoning",
                           "accepted", f"`{b.reasoning_end}` before the tool calls")
        closing = p.choice(closing, unclosed + p.space() + after_end(b))
    # Whitespace right after the opener is the template's layout (`<think>\n`, also when the
    # prompt wrote it), not the model's reasoning: llama.cpp's reasoning has none either.
    return (opener(b) + p.commit() + p.space() + repeated_start(b)
            + reasoning_text(b, calls_to_end, triggers) + p.optional(closing))


def opener(b: Build) -> p.Expr:
    """Match the reasoning start marker; when the template renders it as a special token
    and a fixed label (Gemma's `<|channel>thought`), the token alone is read as it, and
    noted (a label other than the template's then stays in the reasoning text)."""
    token = labelled_token(b.reasoning_start)
    if not token:
        return p.literal(b.reasoning_start)
    alone = p.noted(p.literal(token), "reasoning_label_missing", "accepted",
                    f"`{b.reasoning_start}`")
    return p.choice(p.literal(b.reasoning_start), alone)


def labelled_token(start: str) -> str:
    """Return the special token of a marker made of one token and a word label (empty for
    any other marker)."""
    segments = segmentize_markers(start)
    if len(segments) != 2 or [s.kind for s in segments] != [SegmentKind.MARKER,
                                                             SegmentKind.TEXT]:
        return ""
    return segments[0].value if LABEL.fullmatch(segments[1].value) else ""


def prompt_opens_reasoning(b: Build) -> bool:
    """Tell whether the analysis' generation prompt for the options leaves reasoning open."""
    prompts = {g.enable_thinking: g for g in b.analysis.generation_prompts}
    chosen = prompts.get(b.options.enable_thinking) or prompts.get(None)
    text = chosen.text if chosen is not None else ""
    opened = text.rfind(b.reasoning_start)
    return opened >= 0 and (not b.reasoning_end or text.rfind(b.reasoning_end) < opened)


def repeated_start(b: Build) -> p.Expr:
    """Read a doubled start marker as one (dropped), and note it.

    Also when the generation prompt itself opened the reasoning: the model's own start marker
    is markup, not thought. The one exception is an empty block (only whitespace up to the
    end marker, `<think>\n\n</think>` after a prompt that opened `<think>`): dropping would
    recover nothing, so it stays verbatim in the reasoning, as llama.cpp keeps it (its parse
    vectors expect `<think>` there)."""
    again = p.noted(p.literal(b.reasoning_start), "repeated_reasoning_start", "accepted",
                    f"one `{b.reasoning_start}`")
    dropped_again = p.space() + again
    if not prompt_opens_reasoning(b) or not b.reasoning_end:
        return p.optional(dropped_again)
    kept = p.noted(p.literal(b.reasoning_start), "repeated_reasoning_start", "kept_as_content",
                   f"one `{b.reasoning_start}`")
    empty_block = p.reasoning(p.space() + kept + p.space()) + p.peek(p.literal(b.reasoning_end))
    return p.optional(p.choice(empty_block, dropped_again))


def after_end(b: Build) -> p.Expr:
    """Match the turn header a template writes after the reasoning end (Solar's
    `<|begin|>assistant`): the answer's markup, not its text."""
    header = b.analysis.reasoning.after_end.strip()
    return p.optional(p.literal(header) + p.space()) if header else p.eps()


def header_after_end(b: Build) -> p.Expr:
    """Match that header right after the end marker, leaving the whitespace after it (text
    that follows a nested block is kept verbatim)."""
    header = b.analysis.reasoning.after_end.strip()
    return p.optional(p.literal(header)) if header else p.eps()


def leading_reasoning(b: Build, calls: CallGrammar | None, calls_to_end: p.Expr | None) -> p.Expr:
    """Match the reasoning the output (prompt tail included) may open with."""
    if not b.extracting:
        return empty_opening(b)
    if b.reasoning_start:
        return p.optional(p.space() + p.rule("reasoning", reasoning_block(b, calls, calls_to_end)))
    delimited = (p.reasoning(p.until(b.reasoning_end)) + p.literal(b.reasoning_end) + p.space()
                 + after_end(b))
    return p.optional(p.rule("reasoning", delimited))


def closed_at_start(b: Build) -> p.Expr:
    """Drop a reasoning end marker before anything else in the output: it closes an empty
    block, as some templates write one before their calls (MiniMax-M3's `</mm:think>`).
    Further on, a reasoning marker outside a block is a deviation (content.stray_reasoning)."""
    if not b.extracting or not b.reasoning_end:
        return p.eps()
    return p.optional(p.space() + p.literal(b.reasoning_end) + p.space())


def empty_opening(b: Build) -> p.Expr:
    """Drop a reasoning opening the model left empty, going straight to its answer's marker.

    The opening then comes from the prompt, not from the model: left in the content it would
    show markup the model never wrote.
    """
    start, answer = b.reasoning_start, b.analysis.content.start.strip()
    if not start or not answer:
        return p.eps()
    return p.optional(p.literal(start) + p.space() + p.peek(p.literal(answer)))
