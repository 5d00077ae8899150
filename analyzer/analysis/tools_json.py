"""JSON_NATIVE tool calls: field names, array wrapping, section and per-call markers."""

from __future__ import annotations

import json
from typing import Any

from analyzer.analysis import tools_inputs as inputs
from analyzer.analysis.context import AnalysisContext
from analyzer.analysis.diff import skip_space, skip_space_back
from analyzer.analysis.tools_draft import ToolDraft
from analyzer.analysis.variants import ARG_A, FUNC_A, FUNC_B, ID_A
from analyzer.model import Capabilities
from analyzer.parsing.jsonscan import FoundObject, enclosing_object
from analyzer.piece import Piece

T2_TITLE = "T2 call count: one call vs two calls"


def analyze_json_native(
    ctx: AnalysisContext, draft: ToolDraft, text: str, low: int, high: int, caps: Capabilities
) -> None:
    """Read field names off the call object, then the markers around it."""
    found = enclosing_object(text, text.find(FUNC_A, low, high), low, high)
    if found is None or not isinstance(found.value, dict):
        return
    _register_fields(draft, found.value)
    draft.parameter_order = _parameter_order(text[found.start : found.end], draft)
    outer_start, outer_end = _array_bounds(text, found, draft)
    section_start = Piece.cut(text, low, outer_start).strip()
    section_end = Piece.cut(text, outer_end, high).strip()
    if draft.tools_array_wrapped and section_end.text == "]":
        section_end = Piece("", section_end.pos)
    draft.section_start = ctx.mark_b("tools.format.section_start", section_start.text, "T1",
                                     section_start.pos)
    draft.section_end = ctx.mark_b("tools.format.section_end", section_end.text, "T1",
                                   section_end.pos)
    if caps.supports_parallel_tool_calls:
        _compare_call_count(ctx, draft, found, high, text[high:])


def _register_fields(draft: ToolDraft, call: dict[str, Any]) -> None:
    """Match the object's keys against the probe's name, arguments and id."""
    for key, value in call.items():
        if key == FUNC_A:
            draft.fun_name_is_key = True
            draft.name_field = draft.args_field = ""
            continue
        if isinstance(value, dict) and ARG_A not in json.dumps(value):
            draft.function_field = key
            for sub_key, sub_value in value.items():
                _register_field(draft, f"{key}.{sub_key}", sub_key, sub_value)
        _register_field(draft, key, key, value)


def _register_field(draft: ToolDraft, path: str, key: str, value: Any) -> None:
    if isinstance(value, str) and value == ID_A:
        draft.id_field = path
    elif isinstance(value, str) and value == FUNC_A:
        draft.name_field = path
    elif ARG_A in json.dumps(value, ensure_ascii=False):
        draft.args_field = path
    elif "id" in key and not isinstance(value, dict):
        draft.gen_id_field = path  # an id the template makes up, e.g. an index


def _parameter_order(obj_text: str, draft: ToolDraft) -> list[str]:
    fields = [draft.name_field, draft.args_field, draft.id_field, draft.gen_id_field]
    located = []
    for path in filter(None, fields):
        key = path.rsplit(".", 1)[-1]
        at = max(obj_text.find(f'"{key}"'), obj_text.find(f"'{key}'"))
        located.append((at, path))
    return [path for _, path in sorted(located)]


def _array_bounds(text: str, found: FoundObject, draft: ToolDraft) -> tuple[int, int]:
    """Widen the object's span to an enclosing [ ... ] when the calls sit in an array."""
    before = skip_space_back(text, found.start)
    after = skip_space(text, found.end)
    if before > 0 and text[before - 1] == "[" and after < len(text) and text[after] == "]":
        draft.tools_array_wrapped = True
        return before - 1, after + 1
    return found.start, found.end


def _compare_call_count(
    ctx: AnalysisContext, draft: ToolDraft, first: FoundObject, high: int, trailer: str
) -> None:
    """T2: two calls; learn the separator and whether the markers repeat per call."""
    comparison = ctx.compare("T2", T2_TITLE, inputs.one_call(ctx.calls),
                             inputs.two_calls(ctx.calls))
    if comparison.variant_b is None or not comparison.variant_b.rendered:
        return
    text = comparison.variant_b.rendered
    top = len(text) - len(trailer) if text.endswith(trailer) else len(text)
    second = enclosing_object(text, text.find(FUNC_B, first.end, top), first.end, top)
    if second is None:
        return
    between = Piece.cut(text, first.end, second.start)
    start, end = draft.section_start, draft.section_end
    if start and start in between.text and not draft.tools_array_wrapped:
        _move_to_per_call(ctx, draft, between)
        return
    draft.call_separator = ctx.mark_b("tools.format.call_separator", between.text, "T2",
                                      between.pos)
    del start, end


def _move_to_per_call(ctx: AnalysisContext, draft: ToolDraft, between: Piece) -> None:
    """The section markers repeat around each call: they are per-call markers."""
    for marker in ctx.markers:
        if marker.role == "tools.format.section_start":
            ctx.markers.append(marker.__class__("tools.format.per_call_start", marker.text,
                                                marker.comparison, marker.span_a, marker.span_b))
        if marker.role == "tools.format.section_end":
            ctx.markers.append(marker.__class__("tools.format.per_call_end", marker.text,
                                                marker.comparison, marker.span_a, marker.span_b))
    ctx.markers[:] = [m for m in ctx.markers if not m.role.startswith("tools.format.section_")]
    draft.per_call_start, draft.per_call_end = draft.section_start, draft.section_end
    draft.section_start = draft.section_end = ""
    end_at = 0
    if draft.per_call_end:
        end_at = between.text.find(draft.per_call_end) + len(draft.per_call_end)
    start_at = between.text.rfind(draft.per_call_start)
    separator = between.slice(end_at, start_at)
    draft.call_separator = ctx.mark_b("tools.format.call_separator", separator.text, "T2",
                                      separator.pos)
