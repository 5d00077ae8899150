"""The reasoning part of a grammar: `start reasoning end`, or reasoning up to a delimiter.

The parser reads the generation prompt's tail first, so a prompt that opens `<think>` makes
the output start inside reasoning with no special case here. Reasoning that is never closed
stays reasoning (the model ran out of budget); a tool call the model starts without closing
its reasoning ends the reasoning, but only if the calls run to the end of the output
(a call merely mentioned while thinking stays in the reasoning).
"""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator.build import Build, text_loop
from analyzer.generator.calls import CallGrammar


def reasoning_text(b: Build, calls_to_end: p.Expr | None, triggers: tuple[str, ...]) -> p.Expr:
    """Capture reasoning up to the end marker (or calls that run to the end of the output)."""
    if calls_to_end is None or not triggers:
        return p.reasoning(p.until(b.reasoning_end))
    stops = (b.reasoning_end, *triggers)
    at_trigger = p.reasoning(p.literals(triggers))
    return text_loop(p.reasoning, stops, at_trigger, calls_to_end)


def reasoning_block(b: Build, calls: CallGrammar | None, calls_to_end: p.Expr | None) -> p.Expr:
    """Match `start reasoning [end]`, committed once the start marker is seen."""
    triggers = calls.triggers if calls is not None else ()
    closing = p.literal(b.reasoning_end) + p.space() + after_end(b)
    if calls_to_end is not None and triggers:
        # Calls the model starts without closing its reasoning end it: read, and noted.
        unclosed = p.noted(p.peek(calls_to_end), "unclosed_reasoning", "accepted",
                           f"`{b.reasoning_end}` before the tool calls")
        closing = p.choice(closing, unclosed)
    return (p.literal(b.reasoning_start) + p.commit() + repeated_start(b)
            + reasoning_text(b, calls_to_end, triggers) + p.optional(closing))


def repeated_start(b: Build) -> p.Expr:
    """Note a doubled start marker (the prompt opened the reasoning, the model opened it
    again). The marker stays in the reasoning text, verbatim, as llama.cpp keeps it (its
    parse vectors expect `<think>` there)."""
    again = p.noted(p.literal(b.reasoning_start), "repeated_reasoning_start",
                    "kept_as_content", f"one `{b.reasoning_start}`")
    return p.optional(p.reasoning(p.space() + again))


def after_end(b: Build) -> p.Expr:
    """Match the turn header a template writes after the reasoning end (Solar's
    `<|begin|>assistant`): the answer's markup, not its text."""
    header = b.analysis.reasoning.after_end.strip()
    return p.optional(p.literal(header) + p.space()) if header else p.eps()


def leading_reasoning(b: Build, calls: CallGrammar | None, calls_to_end: p.Expr | None) -> p.Expr:
    """Match the reasoning the output (prompt tail included) may open with."""
    if not b.extracting:
        return empty_opening(b)
    if b.reasoning_start:
        return p.optional(p.space() + p.rule("reasoning", reasoning_block(b, calls, calls_to_end)))
    delimited = (p.reasoning(p.until(b.reasoning_end)) + p.literal(b.reasoning_end) + p.space()
                 + after_end(b))
    return p.optional(p.rule("reasoning", delimited))


def empty_opening(b: Build) -> p.Expr:
    """Drop a reasoning opening the model left empty, going straight to its answer's marker.

    The opening then comes from the prompt, not from the model: left in the content it would
    show markup the model never wrote.
    """
    start, answer = b.reasoning_start, b.analysis.content.start.strip()
    if not start or not answer:
        return p.eps()
    return p.optional(p.literal(start) + p.space() + p.peek(p.literal(answer)))
