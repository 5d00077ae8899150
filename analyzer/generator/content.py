"""The whole grammar of an output: reasoning, content, tool calls, in the template's markers.

Content is the text left once structure is taken out: content wrappers and turn markers are
dropped wherever they appear, and when reasoning is extracted a later reasoning block goes to
the reasoning and a stray reasoning marker is dropped (and noted). A tool-call marker starts
the tool calls only if a call really begins there; otherwise it is text like any other. Text
after the calls is content as well.
"""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator.build import (
    Build,
    dropped,
    first_of,
    kept,
    lit,
    marker_tokens,
    maybe,
    text_loop,
)
from analyzer.generator.calls import CallGrammar
from analyzer.generator.reasoning import closed_at_start, leading_reasoning, reasoning_block
from analyzer.generator.unknown_calls import unknown_call


def call_closers(b: Build) -> tuple[str, ...]:
    """Return the tokens of the calls' closing markers (templates split them unevenly, so a
    stray one may follow the calls)."""
    tools = b.analysis.tools
    return tuple(marker_tokens(tools.format.section_end + tools.format.per_call_end
                               + tools.function.close))


def trailer(b: Build, calls: CallGrammar | None = None) -> p.Expr:
    """Match what may follow the answer: whitespace and turn/wrapper markers (and, after tool
    calls, stray tokens of the closing markers and a call wrapper's closing)."""
    closers = (*call_closers(b), *(c for _, c in wrappers(b, calls))) if calls else ()
    markers = dropped((*b.structural, *closers))
    if markers is None:
        return p.space()
    ending = final_eos(b, after_calls=calls is not None)
    return p.space() + p.zero_or_more(p.choice(ending, markers) + p.space())


def after_calls(b: Build, calls: CallGrammar | None = None) -> p.Expr:
    """Drop stray closing tokens and turn markers right after the calls (and the closing of
    a wrapper the calls came in), but not the whitespace after the last of them: it
    separates the text before the calls from the text after them."""
    markers = dropped((*b.structural, *call_closers(b), *(c for _, c in wrappers(b, calls))))
    if markers is None:
        return p.eps()
    return p.zero_or_more(p.choice(final_eos(b, after_calls=True), p.space() + markers))


# End-of-sequence texts models are known to write: the ones looked for when the template came
# without its tokenizer's own (a tokenizer_config's eos_token).
EOS_TEXTS = ("<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<|end_of_text|>", "</s>", "<|end|>",
             "<｜end▁of▁sentence｜>", "<end_of_turn>", "<eos>", "<|return|>")


def eos_candidates(b: Build) -> tuple[str, ...]:
    """Return the tokenizer's end-of-sequence text if the analysis knows it, else the
    well-known ones."""
    own = b.analysis.eos_token.strip()
    return (own,) if own else EOS_TEXTS


def eos_texts(b: Build) -> tuple[str, ...]:
    """Return the end-of-sequence texts that are not already the template's own markers."""
    return tuple(t for t in eos_candidates(b) if t not in b.structural)


def final_eos_texts(b: Build, after_calls: bool = False) -> tuple[str, ...]:
    """Return the texts that may end an output as its end of sequence: the tokenizer's (or
    the well-known ones) and the template's own turn end (the part a model's output never
    shows), but not the markers the template writes inside the answer (a content wrapper's
    end) - except after the calls, where those close nothing."""
    content = b.analysis.content
    inside = kept(content.start, b.reasoning_start) if after_calls else \
        kept(content.start, content.end, b.reasoning_start, b.reasoning_end)
    closing = kept(content.end, b.reasoning_end) if after_calls else ()
    texts = (*eos_candidates(b), *kept(content.turn_end), *closing)
    return tuple(t for t in dict.fromkeys(texts) if t not in inside)


def eos_at_end(texts: tuple[str, ...]) -> p.Expr:
    """Match an end-of-sequence text and the end of the output."""
    return p.space() + p.literals(texts) + p.space() + p.end()


# Matches nothing: the end of sequence when no text may stand for it.
NEVER = p.not_followed_by(p.eps())


def final_eos(b: Build, after_calls: bool = False) -> p.Expr:
    """Drop an end-of-sequence text at the very end of the output, noting it."""
    texts = final_eos_texts(b, after_calls)
    if not texts:
        return NEVER
    return p.noted(eos_at_end(texts), "trailing_eos", "dropped", "the end of the output")


def trailing_eos(b: Build) -> p.Expr:
    """Drop an end-of-sequence text at the very end of the output, if there, noting it."""
    return p.optional(final_eos(b))


def kept_eos(b: Build) -> p.Expr | None:
    """Keep an end-of-sequence text that does not end the output as content."""
    texts = eos_texts(b)
    if not texts:
        return None
    return p.not_followed_by(eos_at_end(texts)) + p.content(p.literals(texts))


# Wrappers models put around calls that their template does not render: a markdown fence
# (any language tag) and well-known tool-call token pairs.
WRAPPERS = (("```", "```"), ("<tool_call>", "</tool_call>"), ("<tool_calls>", "</tool_calls>"),
            ("<function_calls>", "</function_calls>"))


def wrappers(b: Build, calls: CallGrammar | None) -> tuple[tuple[str, str], ...]:
    """Return the wrapper pairs the template's own call markers do not use."""
    if calls is None:
        return ()
    fmt = b.analysis.tools.format
    own = "\n".join((*calls.triggers, *b.structural, *call_closers(b), fmt.section_start,
                      fmt.per_call_start))
    return tuple((o, c) for o, c in WRAPPERS if o not in own and c not in own)


def wrapped_calls(b: Build, calls: CallGrammar | None) -> p.Expr | None:
    """Drop a wrapper's opening right before the calls, noting it (the call is read)."""
    pairs = wrappers(b, calls)
    if calls is None or not pairs:
        return None
    fence = p.literal("```") + p.regex(r"[\w+\-]*", 32)
    openings = [fence if o == "```" else p.literal(o) for o, _ in pairs]
    wrapper = p.choice(*openings) + p.space() + p.peek(calls.head)
    return p.noted(wrapper, "call_wrapper", "accepted", "the calls without a wrapper")


def wrapper_stops(b: Build, calls: CallGrammar | None) -> tuple[str, ...]:
    """Return the wrapper openings content stops at (kept as text when no call follows)."""
    return tuple(o for o, _ in wrappers(b, calls))


def kept_triggers(calls: CallGrammar | None) -> p.Expr | None:
    """Capture a call marker that starts no call as content, noting why it did not.

    A one-character trigger (a bare `{` or `[`) is ordinary punctuation in text: no note."""
    if calls is None or not calls.triggers:
        return None
    markers = [t for t in calls.triggers if len(t) > 1]
    marks = [t for t in calls.triggers if len(t) == 1]
    noted = p.kept_as_text(p.content(p.literals(markers)), calls.head) if markers else None
    return first_of(noted, p.content(p.literals(marks)) if marks else None)


def stray_reasoning(b: Build) -> p.Expr | None:
    """Drop a reasoning marker in the content (no reasoning block around it: the model closed
    reasoning the prompt had closed, say), and note it: the text is the model's, not silently
    lost."""
    stray = dropped(b.stray_reasoning)
    if stray is None:
        return None
    return p.noted(stray, "stray_reasoning_marker", "dropped",
                   "content (no reasoning block is open here)")


def content_text(b: Build, calls: CallGrammar | None,
                 undeclared: CallGrammar | None = None) -> p.Expr:
    """Capture content up to the tool calls, leaving structural markers out (undeclared: the
    calls of a request that declares no function, kept as text and reported)."""
    triggers = calls.triggers if calls is not None else ()
    unknown, plain_triggers = unknown_call(b, calls), None
    if calls is None and undeclared is not None:
        unknown = unknown_call(b, undeclared, declared=False)
        if unknown is not None:  # a marker that starts no call is plain text
            triggers = undeclared.triggers
            plain_triggers = p.content(p.literals(triggers))
    nested = reasoning_block(b, None, None, nested=True) if b.extracting and b.reasoning_start \
        else None
    if nested is not None:  # reasoning after some content: read as reasoning, and noted
        nested = p.noted(nested, "content_around_reasoning", "accepted",
                         "reasoning before the content")
    wrapped, openings = wrapped_calls(b, calls), wrapper_stops(b, calls)
    kept_openings = p.content(p.literals(openings)) if openings else None
    at_stop = first_of(nested, final_eos(b), wrapped, unknown, dropped(b.structural),
                       stray_reasoning(b), kept_triggers(calls), kept_eos(b), kept_openings,
                       plain_triggers)
    stops = (*triggers, *b.structural, *b.stray_reasoning, *eos_texts(b), *openings)
    if nested is not None:
        stops += (b.reasoning_start,)
    breaker = calls.head if calls is not None else None
    return text_loop(p.content, stops, at_stop, breaker)


def output_grammar(b: Build, calls: CallGrammar | None,
                   undeclared: CallGrammar | None = None) -> p.Expr:
    """Match a whole output: reasoning, content, then tool calls if any (undeclared: the
    calls of a request that declares no function, kept as text and reported)."""
    if b.options.json_schema is not None:
        return response_format_grammar(b)
    ending = trailing_eos(b) + p.end()
    calls_to_end = calls.section + trailer(b, calls) + ending if calls is not None else None
    lead = leading_reasoning(b, calls, calls_to_end) + closed_at_start(b)
    text = p.rule("content", content_text(b, calls, undeclared))
    if calls is None:
        return lead + text + ending
    # Text after the calls (a model's closing remark) is content too, never an error.
    tool_calls = p.rule("tool-calls", calls.section) + after_calls(b, calls)
    return lead + text + p.zero_or_more(tool_calls + text) + ending


def response_format_grammar(b: Build) -> p.Expr:
    """Match reasoning then a JSON answer, possibly in a ```json fence or content markers."""
    value = p.content(p.json_value())
    fenced = p.literal("```json") + p.space() + value + p.space() + p.literal("```")
    content = b.analysis.content
    body = p.space() + p.optional(lit(content.start)) + p.space() + p.choice(fenced, value)
    return (leading_reasoning(b, None, None) + closed_at_start(b)
            + p.rule("response-format", body)
            + maybe(content.end) + trailer(b) + p.end())
