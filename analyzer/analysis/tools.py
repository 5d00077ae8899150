"""Tool-call comparisons T1-T7: classify the format and read every marker of a call.

Layout of one tag-based call, as the parser generator reads these fields:

    per_call_start [call id if PRE_FUNC_NAME] function.name_prefix NAME function.name_suffix
    [call_index.prefix N call_index.suffix] [call_id.prefix ID call_id.suffix if BETWEEN]
    arguments.start ARGS arguments.end [call id if POST_ARGS] function.close per_call_end

Calls are joined by format.call_separator and the whole group sits between
format.section_start and format.section_end. Whitespace around markers is not part of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.analysis import tools_inputs as inputs
from analyzer.analysis.context import AnalysisContext
from analyzer.analysis.diff import (
    common_prefix_len,
    common_suffix_fixed,
    last_marker_end,
    marker_run_after,
    marker_run_before,
    marker_spans,
    skip_space,
    skip_space_back,
    tag_closer_len,
)
from analyzer.analysis.tools_draft import ToolDraft
from analyzer.analysis.tools_ids import IdPlacement, compare_call_ids
from analyzer.analysis.tools_json import analyze_json_native
from analyzer.analysis.tools_tagged import ArgsSpan, analyze_tagged_args
from analyzer.analysis.variants import (
    ARG_A,
    ASSISTANT_MSG,
    FUNC_A,
    FUNC_B,
    skipped,
)
from analyzer.model import (
    CallIdPosition,
    Capabilities,
    Comparison,
    ContentAnalysis,
    ReasoningAnalysis,
    ToolFormat,
    ToolsAnalysis,
)
from analyzer.parsing.jsonscan import enclosing_object, quoted_after_opener
from analyzer.piece import Piece

TITLES = {
    "T1": "T1 tool presence: answer text vs one tool call",
    "T2": "T2 call count: one call vs two calls",
    "T3": "T3 function name: one function vs another",
    "T6": "T6 argument container: no arguments vs one",
}
ALL_IDS = ("T1", "T2", "T3", "A1", "A2", "A3", "T5", "T6", "T7")


@dataclass(frozen=True)
class CallRender:
    """The one-call render (T1's variant B) and where the tool section and name sit in it."""

    text: str
    low: int  # start of the tool section
    high: int  # end of the tool section
    name_pos: int  # where FUNC_A is written


@dataclass(frozen=True)
class Repetition:
    """What T2 shows: per-call header, a call's tail, separator, call index."""

    header: Piece  # text before the name that every call repeats (one-call render)
    tail_len: int  # length of a call's text after its name
    separator: Piece  # between the two calls, in the two-call render
    index_offset: int  # offset of the call index digit after the name, -1 if none
    index_base: int


def analyze_tools(
    ctx: AnalysisContext, caps: Capabilities, reasoning: ReasoningAnalysis,
    content: ContentAnalysis | None = None,
) -> ToolsAnalysis:
    """Run T1-T7 (and A1-A3 for tagged arguments) and return the tool analysis."""
    if not caps.supports_tool_calls:
        for cid in ALL_IDS:
            ctx.record(skipped(cid, cid, "the template does not render tool calls"))
        return ToolsAnalysis()
    draft = ToolDraft()
    call = compare_tool_presence(ctx, draft, reasoning, content or ContentAnalysis())
    if call is None:
        return draft.freeze()
    if draft.mode == ToolFormat.JSON_NATIVE:
        analyze_json_native(ctx, draft, call.text, call.low, call.high, caps)
    else:
        analyze_tagged_call(ctx, draft, call, caps)
    draft.variant = variant_name(draft)
    return draft.freeze()


def compare_tool_presence(
    ctx: AnalysisContext, draft: ToolDraft, reasoning: ReasoningAnalysis, content: ContentAnalysis
) -> CallRender | None:
    """T1: answer text vs one call; cut out the tool section and classify its format."""
    comparison = ctx.compare("T1", TITLES["T1"], inputs.no_calls(), inputs.one_call(ctx.calls))
    if comparison.diff is None or comparison.variant_b is None:
        return None
    text = comparison.variant_b.rendered
    low = len(comparison.diff.prefix)
    high = len(text) - len(comparison.diff.suffix)
    low = _skip_leading_markers(text, low, high, (reasoning.start, reasoning.end, content.start,
                                                  content.end))
    name_pos = text.find(FUNC_A, low, high)
    if name_pos < 0:
        return None
    if not content.end:
        high = _before_turn_end(comparison, text, name_pos, high, content.turn_end)
    draft.mode = classify(text, low, high, draft)
    return CallRender(text, low, high, name_pos)


def _before_turn_end(
    comparison: Comparison, text: str, name_pos: int, high: int, turn_end: str
) -> int:
    """Cut the end-of-turn marker off the tool section.

    When the answer's turn ends in a marker of its own (inside T1's diff), the calls' turn
    ends in one too: the answer's marker where the call render repeats it, else the call
    render's last marker group (e.g. Functionary's `<|eom_id|>` against `<|eot_id|>`).
    """
    assert comparison.variant_a is not None and comparison.diff is not None
    answer = comparison.variant_a.rendered
    low_a, high_a = len(comparison.diff.prefix), len(answer) - len(comparison.diff.suffix)
    at = answer.find(ASSISTANT_MSG, low_a, high_a)
    if at < 0:
        return high
    # The whole group: `<|close|>assistant<|sep|>` ends the turn, `<|close|>` alone would
    # match any closing tag inside the calls.
    eom = marker_run_after(answer, skip_space(answer, at + len(ASSISTANT_MSG)))
    for marker in (answer[eom[0] : eom[1]] if eom else "", turn_end):
        repeated = text.find(marker, name_pos, high) if marker else -1
        if repeated >= 0:
            return skip_space_back(text, repeated)
    if eom is None or eom[1] > high_a:
        return high
    last = marker_run_before(text, skip_space_back(text, high), with_word=False)
    return skip_space_back(text, last[0]) if last is not None and last[0] > name_pos else high


def _skip_leading_markers(text: str, low: int, high: int, markers: tuple[str, ...]) -> int:
    """Move low past empty reasoning or content blocks a template puts before its calls."""
    for marker in markers:
        at = skip_space(text, low, high)
        if marker and text.startswith(marker, at) and at + len(marker) <= high:
            low = at + len(marker)
    return skip_space(text, low, high)


def classify(text: str, low: int, high: int, draft: ToolDraft) -> ToolFormat:
    """Tell where the name and arguments live: JSON object, tag + JSON, or all tags."""
    name_quote = quoted_after_opener(text, FUNC_A, low, high)
    if name_quote:
        draft.uses_python_dicts = name_quote == "'"
        return ToolFormat.JSON_NATIVE
    arg_quote = quoted_after_opener(text, ARG_A, low, high)
    if arg_quote and enclosing_object(text, text.find(ARG_A, low, high), low, high):
        draft.uses_python_dicts = arg_quote == "'"
        return ToolFormat.TAG_WITH_JSON
    return ToolFormat.TAG_WITH_TAGGED


def analyze_tagged_call(
    ctx: AnalysisContext, draft: ToolDraft, call: CallRender, caps: Capabilities
) -> None:
    """Read the markers of a tag-based call: header, name, arguments, id, closers."""
    repetition = compare_call_count(ctx, call) if caps.supports_parallel_tool_calls else None
    if repetition is None:
        ctx.record(skipped("T2", TITLES["T2"], "the template does not render two calls"))
    else:
        draft.call_separator = ctx.mark_b("tools.format.call_separator",
                                          repetition.separator.text, "T2", repetition.separator.pos)
    if draft.mode == ToolFormat.TAG_WITH_TAGGED:
        args = analyze_tagged_args(ctx, draft, call.text, call.name_pos, call.high)
    else:
        args = _json_args(ctx, call)
    if args is None:
        return
    ident = compare_call_ids(ctx, draft, call.text, call.name_pos, args.start, args.end, call.high)
    compare_function_names(ctx, draft, call, repetition, ident)
    _split_between_name_and_args(ctx, draft, call, args, repetition, ident)
    _split_call_end(ctx, draft, call, args, repetition, ident)


def compare_call_count(ctx: AnalysisContext, call: CallRender) -> Repetition | None:
    """T2: one call vs two; find the repeated header, separator and any call index."""
    comparison = ctx.compare("T2", TITLES["T2"], inputs.one_call(ctx.calls),
                             inputs.two_calls(ctx.calls))
    if comparison.variant_b is None or not comparison.variant_b.rendered:
        return None
    text = comparison.variant_b.rendered
    name_end = call.name_pos + len(FUNC_A)
    second = text.find(FUNC_B, name_end)
    if second < 0 or text[:name_end] != call.text[:name_end]:
        return None
    trailer = call.text[call.high :]
    high = len(text) - len(trailer) if text.endswith(trailer) else len(text)
    header_len = common_suffix_fixed(text[call.low : call.name_pos], text[call.low : second])
    header_len -= _closer_of_previous_tag(call.text, call.name_pos - header_len, header_len)
    header = Piece.cut(call.text, call.name_pos - header_len, call.name_pos)
    first_tail = text[name_end : second - header_len]
    shared, index_offset, base = _common_with_index(first_tail, text[second + len(FUNC_B) : high])
    separator = Piece.cut(text, name_end + shared, second - header_len)
    return Repetition(header, shared, separator, index_offset, base)


def _closer_of_previous_tag(text: str, pos: int, length: int) -> int:
    """How much of a repeated header at pos belongs to the tag before it, not to the call.

    Two calls in a row cannot tell `<|sep|><|open|>call` from `<|open|>call<|sep|>`; when the
    header opens with the marker that closes a tag name left open before it
    (`<|open|>tools` + `<|sep|>`), that marker ends the previous tag.
    """
    closer = tag_closer_len(text, pos)
    return closer if closer < length else 0


def _common_with_index(first: str, second: str) -> tuple[int, int, int]:
    """Common prefix length of two call tails, allowing one differing call-index digit."""
    length = common_prefix_len(first, second)
    if length < min(len(first), len(second)):
        one, two = first[length], second[length]
        if one.isdigit() and two.isdigit() and int(two) == int(one) + 1:
            rest = common_prefix_len(first[length + 1 :], second[length + 1 :])
            return length + 1 + rest, length, int(one)
    return length, -1, 0


def _json_args(ctx: AnalysisContext, call: CallRender) -> ArgsSpan | None:
    """TAG_WITH_JSON: the arguments are the JSON object holding the argument name."""
    ctx.compare("T6", TITLES["T6"], inputs.zero_args(ctx.calls), inputs.one_arg(ctx.calls))
    arg_at = call.text.find(ARG_A, call.name_pos, call.high)
    found = enclosing_object(call.text, arg_at, call.name_pos, call.high)
    return None if found is None else ArgsSpan(found.start, found.end)


def compare_function_names(
    ctx: AnalysisContext, draft: ToolDraft, call: CallRender, repetition: Repetition | None,
    ident: IdPlacement | None,
) -> None:
    """T3: one function vs another; split the header into section, per-call and name prefix."""
    ctx.compare("T3", TITLES["T3"], inputs.one_call(ctx.calls), inputs.other_function(ctx.calls))
    if repetition is not None:
        header = repetition.header
        section = Piece.cut(call.text, call.low, header.pos)
    else:
        section, header = Piece("", call.low), Piece.cut(call.text, call.low, call.name_pos)
    holder = marker_holding(call.text, call.name_pos)
    split = last_marker_end(header.text) if holder is None else holder[0] - header.pos
    split = max(0, min(split, len(header.text)))
    per_call, name_prefix = header.head(split), header.drop_head(split)
    if repetition is None:
        section, per_call = _leading_groups(per_call)
    if ident is not None and ident.position == CallIdPosition.PRE_FUNC_NAME:
        per_call, name_prefix = _around_id(ctx, draft, call.text, per_call, name_prefix, ident)
    _mark(ctx, draft, "section_start", "tools.format.section_start", section.strip(), "T1")
    _mark(ctx, draft, "per_call_start", "tools.format.per_call_start", per_call.strip(), "T1")
    _mark(ctx, draft, "name_prefix", "tools.function.name_prefix", _lstrip(name_prefix), "T3a")


def _mark(
    ctx: AnalysisContext, draft: ToolDraft, attr: str, role: str, piece: Piece, cid: str
) -> None:
    """Set a draft field and record its marker (T3a: variant A of T3, the one-call render)."""
    if cid == "T3a":
        setattr(draft, attr, ctx.mark_a(role, piece.text, "T3", piece.pos))
    else:
        setattr(draft, attr, ctx.mark_b(role, piece.text, cid, piece.pos))


def _around_id(
    ctx: AnalysisContext, draft: ToolDraft, text: str, per_call: Piece, name_prefix: Piece,
    ident: IdPlacement,
) -> tuple[Piece, Piece]:
    """An id written before the name splits the header: opener, id, then the name prefix.

    The opener keeps what precedes the id; what follows it up to the name is the name
    prefix, which the call needs whether or not an id is written.
    """
    if not per_call.pos <= ident.value.pos < per_call.end:
        return per_call, name_prefix
    opener = Piece.cut(text, per_call.pos, ident.value.pos).strip()
    if draft.id_prefix == opener.text:
        draft.id_prefix = ""
        ctx.markers[:] = [m for m in ctx.markers if m.role != "tools.call_id.prefix"]
    after_id = ident.value.end + len(draft.id_suffix)
    return opener, Piece.cut(text, after_id, name_prefix.end)


def _lstrip(piece: Piece) -> Piece:
    lead = len(piece.text) - len(piece.text.lstrip())
    return piece.drop_head(lead)


def marker_holding(text: str, pos: int) -> tuple[int, int] | None:
    """Return the span of a marker that contains position pos (name inside a tag)."""
    for start, end in marker_spans(text):
        if start < pos < end:
            return start, end
    return None


def _leading_groups(header: Piece) -> tuple[Piece, Piece]:
    """Without T2, take a first marker group as section start and a second as per-call."""
    first = marker_run_after(header.text, skip_space(header.text, 0))
    if first is None:
        return Piece("", header.pos), header
    rest = skip_space(header.text, first[1])
    second = marker_run_after(header.text, rest)
    if second is None:
        return header.head(first[1]), Piece("", header.pos + first[1])
    return header.head(first[1]), header.slice(rest, second[1])


def _split_between_name_and_args(
    ctx: AnalysisContext, draft: ToolDraft, call: CallRender, args: ArgsSpan,
    repetition: Repetition | None, ident: IdPlacement | None,
) -> None:
    """Cut the text between the name and the arguments into suffix, index, id, args start."""
    gap = Piece.cut(call.text, call.name_pos + len(FUNC_A), args.start)
    holder = marker_holding(call.text, call.name_pos)
    cut = holder[1] - gap.pos if holder else bare_len(gap.text)
    used = cut
    if repetition is not None and 0 <= repetition.index_offset < len(gap.text):
        index_start, used = _index_markers(ctx, draft, gap, repetition)
        cut = min(cut, index_start)
    if ident is not None and ident.position == CallIdPosition.BETWEEN_FUNC_AND_ARGS:
        cut = min(cut, ident.prefix.pos - gap.pos)
        used = max(used, ident.suffix.end - gap.pos)
    _mark(ctx, draft, "name_suffix", "tools.function.name_suffix", gap.head(cut).strip(), "T3a")
    start = gap.drop_head(min(max(used, cut), len(gap.text))).strip()
    _mark(ctx, draft, "args_start", "tools.arguments.start", start, "T1")


def bare_len(text: str) -> int:
    """Length of the text before its first marker (all of it when there is none)."""
    spans = marker_spans(text)
    return spans[0][0] if spans else len(text)


def _index_markers(
    ctx: AnalysisContext, draft: ToolDraft, gap: Piece, repetition: Repetition
) -> tuple[int, int]:
    """Record the call index around its digit; return (start of its prefix, end of suffix)."""
    digit = repetition.index_offset
    prefix_start = last_marker_end(gap.text, 0, digit)
    prefix = gap.slice(prefix_start, digit)
    after = gap.drop_head(digit + 1)
    suffix = after.head(bare_len(after.text))
    draft.index_present, draft.index_base = True, repetition.index_base
    draft.index_prefix = ctx.mark_b("tools.call_index.prefix", prefix.text, "T1", prefix.pos)
    draft.index_suffix = ctx.mark_b("tools.call_index.suffix", suffix.text, "T1", suffix.pos)
    return prefix_start, suffix.end - gap.pos


def _split_call_end(
    ctx: AnalysisContext, draft: ToolDraft, call: CallRender, args: ArgsSpan,
    repetition: Repetition | None, ident: IdPlacement | None,
) -> None:
    """Cut the text after the arguments into args end, close, per-call end and section end."""
    start = args.end
    if ident is not None and ident.position == CallIdPosition.POST_ARGS:
        before_id = Piece.cut(call.text, args.end, ident.prefix.pos).strip()
        _mark(ctx, draft, "args_end", "tools.arguments.end", before_id, "T1")
        start = max(start, ident.suffix.end)
    tail = Piece.cut(call.text, start, call.high)
    if repetition is not None:
        length = repetition.tail_len - (start - call.name_pos - len(FUNC_A))
        call_end = tail.head(max(0, min(length, len(tail.text))))
        section_end = tail.drop_head(len(call_end.text))
    else:
        call_end, section_end = _split_trailing_group(tail, bool(draft.section_start))
    rest = call_end.strip()
    per_call_end = Piece("", rest.end)
    if draft.per_call_start:
        group = marker_run_before(rest.text, len(rest.text))
        if group is not None:
            per_call_end = rest.drop_head(group[0])
            rest = rest.drop_tail(len(per_call_end.text)).strip()
    if draft.mode == ToolFormat.TAG_WITH_TAGGED and not draft.args_end:
        args_end = rest.head(bare_len(rest.text)).strip()
        _mark(ctx, draft, "args_end", "tools.arguments.end", args_end, "T1")
        rest = rest.drop_head(len(rest.text) - len(rest.text[len(args_end.text):].lstrip()))
    _mark(ctx, draft, "close", "tools.function.close", rest.strip(), "T3a")
    _mark(ctx, draft, "per_call_end", "tools.format.per_call_end", per_call_end, "T1")
    _mark(ctx, draft, "section_end", "tools.format.section_end",
          _with_tag_closer(call.text, section_end.strip()), "T1")


def _with_tag_closer(text: str, piece: Piece) -> Piece:
    """Extend a marker group that leaves a tag name open by the marker closing it."""
    if not piece.text:
        return piece
    return Piece.cut(text, piece.pos, piece.end + tag_closer_len(text, piece.end))


def _split_trailing_group(tail: Piece, has_section: bool) -> tuple[Piece, Piece]:
    """Without T2: the last marker group closes the section when a section start exists."""
    text = tail.text.rstrip()
    group = marker_run_before(text, len(text)) if has_section else None
    if group is None:
        return tail, Piece("", tail.end)
    return tail.head(group[0]), tail.slice(group[0], group[1])


def variant_name(draft: ToolDraft) -> str:
    """Name the format's kind in the earlier design's words, for people and the lab."""
    if draft.mode == ToolFormat.JSON_NATIVE:
        if "```" in draft.section_start:
            return "markdown-block"
        return "name-as-key" if draft.fun_name_is_key else "json-native"
    if draft.index_present:
        return "prefixed-indexed"
    if draft.per_call_start.startswith("[") or draft.section_start.startswith("["):
        return "bracket-tag"
    return "tagged-json" if draft.mode == ToolFormat.TAG_WITH_JSON else "tagged-args"
