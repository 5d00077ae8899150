"""The whole grammar of an output: reasoning, content, tool calls, in the template's markers.

Content is the text left once structure is taken out: content wrappers and turn markers are
dropped wherever they appear, and when reasoning is extracted a later reasoning block goes to
the reasoning and a stray reasoning marker is dropped. A tool-call marker in the text starts
the tool calls only if a call really begins there; otherwise it is text like any other. Text
after the calls is content as well.
"""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator.build import (
    Build,
    dropped,
    first_of,
    lit,
    marker_tokens,
    maybe,
    text_loop,
)
from analyzer.generator.calls import CallGrammar
from analyzer.generator.reasoning import leading_reasoning, reasoning_block


def call_closers(b: Build) -> tuple[str, ...]:
    """Return the tokens of the calls' closing markers (templates split them unevenly, so a
    stray one may follow the calls)."""
    tools = b.analysis.tools
    return tuple(marker_tokens(tools.format.section_end + tools.format.per_call_end
                               + tools.function.close))


def trailer(b: Build, after_calls: bool = False) -> p.Expr:
    """Match what may follow the answer: whitespace and turn/wrapper markers (and, after tool
    calls, stray tokens of the closing markers)."""
    closers = call_closers(b) if after_calls else ()
    markers = dropped((*b.structural, *closers))
    if markers is None:
        return p.space()
    return p.space() + p.zero_or_more(markers + p.space())


def after_calls(b: Build) -> p.Expr:
    """Drop stray closing tokens and turn markers right after the calls, but not the
    whitespace after the last of them: it separates the text before the calls from the text
    after them."""
    markers = dropped((*b.structural, *call_closers(b)))
    return p.zero_or_more(p.space() + markers) if markers is not None else p.eps()


# End-of-sequence texts models are known to write (the analysis does not carry the
# tokenizer's own): at the very end of the output one is dropped, and noted.
EOS_TEXTS = ("<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<|end_of_text|>", "</s>", "<|end|>",
             "<｜end▁of▁sentence｜>", "<end_of_turn>", "<eos>", "<|return|>")


def eos_texts(b: Build) -> tuple[str, ...]:
    """Return the end-of-sequence texts that are not already the template's own markers."""
    return tuple(t for t in EOS_TEXTS if t not in b.structural)


def eos_at_end(b: Build) -> p.Expr:
    """Match an end-of-sequence text and the end of the output."""
    return p.space() + p.literals(eos_texts(b)) + p.space() + p.end()


def trailing_eos(b: Build) -> p.Expr:
    """Drop an end-of-sequence text at the very end of the output, noting it."""
    return p.optional(p.noted(eos_at_end(b), "trailing_eos", "dropped", "the end of the output"))


def kept_eos(b: Build) -> p.Expr:
    """Keep an end-of-sequence text that does not end the output as content."""
    return p.not_followed_by(eos_at_end(b)) + p.content(p.literals(eos_texts(b)))


def kept_triggers(calls: CallGrammar | None) -> p.Expr | None:
    """Capture a call marker that starts no call as content, noting why it did not.

    A one-character trigger (a bare `{` or `[`) is ordinary punctuation in text: no note."""
    if calls is None or not calls.triggers:
        return None
    markers = [t for t in calls.triggers if len(t) > 1]
    marks = [t for t in calls.triggers if len(t) == 1]
    noted = p.kept_as_text(p.content(p.literals(markers)), calls.head) if markers else None
    return first_of(noted, p.content(p.literals(marks)) if marks else None)


def content_text(b: Build, calls: CallGrammar | None) -> p.Expr:
    """Capture content up to the tool calls, leaving structural markers out."""
    triggers = calls.triggers if calls is not None else ()
    nested = reasoning_block(b, None, None) if b.extracting and b.reasoning_start else None
    if nested is not None:  # reasoning after some content: read as reasoning, and noted
        nested = p.noted(nested, "content_around_reasoning", "accepted",
                         "reasoning before the content")
    at_stop = first_of(nested, dropped((*b.structural, *b.stray_reasoning)), kept_triggers(calls),
                       kept_eos(b))
    stops = (*triggers, *b.structural, *b.stray_reasoning, *eos_texts(b))
    if nested is not None:
        stops += (b.reasoning_start,)
    breaker = calls.head if calls is not None else None
    return text_loop(p.content, stops, at_stop, breaker)


def output_grammar(b: Build, calls: CallGrammar | None) -> p.Expr:
    """Match a whole output: reasoning, content, then tool calls if any."""
    if b.options.json_schema is not None:
        return response_format_grammar(b)
    ending = trailing_eos(b) + p.end()
    calls_to_end = calls.section + trailer(b, True) + ending if calls is not None else None
    lead = leading_reasoning(b, calls, calls_to_end)
    text = p.rule("content", content_text(b, calls))
    if calls is None:
        return lead + text + ending
    # Text after the calls (a model's closing remark) is content too, never an error.
    tool_calls = p.rule("tool-calls", calls.section) + after_calls(b)
    return lead + text + p.zero_or_more(tool_calls + text) + ending


def response_format_grammar(b: Build) -> p.Expr:
    """Match reasoning then a JSON answer, possibly in a ```json fence or content markers."""
    value = p.content(p.json_value())
    fenced = p.literal("```json") + p.space() + value + p.space() + p.literal("```")
    content = b.analysis.content
    body = p.space() + p.optional(lit(content.start)) + p.space() + p.choice(fenced, value)
    return (leading_reasoning(b, None, None) + p.rule("response-format", body)
            + maybe(content.end) + trailer(b) + p.end())
