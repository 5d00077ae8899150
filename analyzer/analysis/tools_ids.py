"""Call id comparison T7: where a tag-based call writes its id, and the markers around it."""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.analysis import tools_inputs as inputs
from analyzer.analysis.context import AnalysisContext
from analyzer.analysis.diff import last_marker_end, marker_run_before, marker_spans, skip_space_back
from analyzer.analysis.reasoning import closing_form
from analyzer.analysis.tools_draft import ToolDraft
from analyzer.analysis.variants import ID_A
from analyzer.model import CallIdPosition
from analyzer.piece import Piece

T7_TITLE = "T7 call id: one id vs another"


@dataclass(frozen=True)
class IdPlacement:
    """Where the id sits in the one-call render, and the text claimed around it."""

    position: CallIdPosition
    prefix: Piece
    value: Piece
    suffix: Piece


def compare_call_ids(
    ctx: AnalysisContext, draft: ToolDraft, text: str, name_pos: int, args_start: int,
    args_end: int, high: int,
) -> IdPlacement | None:
    """T7: render the same call with two ids; classify where the id goes."""
    comparison = ctx.compare("T7", T7_TITLE, inputs.one_call(ctx.calls), inputs.other_id(ctx.calls))
    if comparison.diff is None or not comparison.diff.left:
        return None
    at = text.find(ID_A, max(0, len(comparison.diff.prefix) - len(ID_A)), high)
    if at < 0:
        return None
    value = Piece(ID_A, at)
    position = _position(at, name_pos, args_start, args_end)
    if position == CallIdPosition.NONE:
        return None
    prefix = _prefix(text, at)
    suffix = _suffix(text, at + len(ID_A), high, prefix.text)
    draft.id_pos = position
    draft.id_prefix = ctx.mark_a("tools.call_id.prefix", prefix.text, "T7", prefix.pos)
    draft.id_suffix = ctx.mark_a("tools.call_id.suffix", suffix.text, "T7", suffix.pos)
    return IdPlacement(position, prefix, value, suffix)


def _position(at: int, name_pos: int, args_start: int, args_end: int) -> CallIdPosition:
    if at < name_pos:
        return CallIdPosition.PRE_FUNC_NAME
    if at < args_start:
        return CallIdPosition.BETWEEN_FUNC_AND_ARGS
    if at >= args_end:
        return CallIdPosition.POST_ARGS
    return CallIdPosition.NONE


def _prefix(text: str, at: int) -> Piece:
    """The marker group right before the id, or the bare text since the last marker."""
    group = marker_run_before(text, skip_space_back(text, at), with_word=False)
    if group is not None:
        return Piece.cut(text, group[0], group[1])
    start = last_marker_end(text, max(0, at - 200), at)
    return Piece.cut(text, start, at)


def _suffix(text: str, end: int, high: int, prefix: str) -> Piece:
    """The bare text after the id up to the next marker, or the tag that closes its prefix."""
    bare = Piece.cut(text, end, high)
    for start, _ in marker_spans(text):
        if start >= end:
            bare = Piece.cut(text, end, min(start, high))
            break
    closer = closing_form(prefix)
    if not bare.text and closer and text.startswith(closer, end):
        return Piece(closer, end)
    return bare
