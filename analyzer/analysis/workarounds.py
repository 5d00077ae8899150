"""Declarative last-resort patches for templates whose renders cannot reveal their format.

Each workaround names itself, recognizes its templates by a substring of the source, and
patches the finished analysis. The analysis lists the names of those it applied. The list is
kept short on purpose: the differential mechanism is fixed first, a workaround is the last
resort for formats a template never renders.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from analyzer.model import (
    Analysis,
    ArgumentsAnalysis,
    ContentAnalysis,
    ContentMode,
    FunctionAnalysis,
    Marker,
    ReasoningAnalysis,
    ReasoningMode,
    ToolFormat,
    ToolFormatAnalysis,
    ToolsAnalysis,
)


@dataclass(frozen=True)
class Workaround:
    """A named patch applied to analyses of templates whose source matches."""

    name: str
    applies: Callable[[str, Analysis], bool]
    patch: Callable[[Analysis], Analysis]
    why: str


def _source_has(*needles: str) -> Callable[[str, Analysis], bool]:
    return lambda source, _analysis: all(needle in source for needle in needles)


def _granite_markers(analysis: Analysis) -> Analysis:
    reasoning = ReasoningAnalysis(ReasoningMode.TAG_BASED, "<think>", "</think>",
                                  analysis.reasoning.field)
    content = ContentAnalysis(ContentMode.WRAPPED_WITH_REASONING, "<response>", "</response>",
                              analysis.content.requires_nonnull_content)
    return dataclasses.replace(analysis, reasoning=reasoning, content=content)


def _think_tags(analysis: Analysis) -> Analysis:
    reasoning = ReasoningAnalysis(ReasoningMode.TAG_BASED, "<think>", "</think>",
                                  analysis.reasoning.field)
    return dataclasses.replace(analysis, reasoning=reasoning)


def _lfm2_python_calls(analysis: Analysis) -> Analysis:
    # The format LFM2.5-8B-A1B's template renders; its siblings list tools but never render calls.
    tools = ToolsAnalysis(
        format=ToolFormatAnalysis(
            mode=ToolFormat.TAG_WITH_TAGGED, section_start="<|tool_call_start|>[",
            section_end="]<|tool_call_end|>", call_separator=", ", variant="tagged-args",
        ),
        function=FunctionAnalysis(name_suffix="("),
        arguments=ArgumentsAnalysis(end=")", name_suffix="=", value_prefix="'", value_suffix="'",
                                    separator=", ", literal_style="python"),
    )
    return dataclasses.replace(analysis, tools=tools)


WORKAROUNDS: tuple[Workaround, ...] = (
    Workaround(
        name="granite-3.3-thinking-prompt",
        applies=_source_has("Write your thoughts between <think></think> and write your "
                            "response between <response></response>"),
        patch=_granite_markers,
        why="Granite 3.3 never renders reasoning; only its system prompt names the markers.",
    ),
    Workaround(
        name="kimi-k2-think-tags",
        applies=lambda source, analysis: analysis.reasoning.mode == ReasoningMode.NONE
        and "<|tool_calls_section_begin|>" in source and "<|im_assistant|>" in source,
        patch=_think_tags,
        why="Kimi K2 models write `<think>...</think>` before the answer, as the later K2 "
            "templates render it; the first K2 template drops reasoning, so no render shows it.",
    ),
    Workaround(
        name="lfm2-python-calls",
        applies=lambda source, analysis: analysis.tools.format.mode == ToolFormat.NONE
        and ('"List of tools: <|tool_list_start|>["' in source or '"List of tools: ["' in source),
        patch=_lfm2_python_calls,
        why="LFM2 templates list tools but never render a call; the model writes "
            "`<|tool_call_start|>[name(arg='v')]<|tool_call_end|>` as LFM2.5 renders it.",
    ),
)


def apply_workarounds(source: str, analysis: Analysis) -> Analysis:
    """Apply every matching workaround in order and list the ones applied."""
    applied = list(analysis.workarounds)
    for workaround in WORKAROUNDS:
        if workaround.applies(source, analysis):
            analysis = workaround.patch(analysis)
            applied.append(workaround.name)
            analysis = _with_marker_origins(analysis, workaround.name)
    return dataclasses.replace(analysis, workarounds=tuple(applied))


def _with_marker_origins(analysis: Analysis, name: str) -> Analysis:
    """Record markers the patch introduced that no comparison produced."""
    known = {(m.role, m.text) for m in analysis.markers}
    fields = dict(_string_fields("reasoning", analysis.reasoning))
    fields.update(_string_fields("content", analysis.content))
    fields.update(_string_fields("tools", analysis.tools))
    added = [Marker(role, text, f"workaround:{name}", None, None)
             for role, text in fields.items() if text and (role, text) not in known]
    return dataclasses.replace(analysis, markers=analysis.markers + tuple(added))


def _string_fields(prefix: str, value: object) -> list[tuple[str, str]]:
    """List (dotted role, text) for every marker string inside a result dataclass."""
    found: list[tuple[str, str]] = []
    for field in dataclasses.fields(value):  # type: ignore[arg-type]
        item = getattr(value, field.name)
        role = f"{prefix}.{field.name}"
        if dataclasses.is_dataclass(item):
            found.extend(_string_fields(role, item))
        elif isinstance(item, str) and not isinstance(item, ToolFormat | ReasoningMode):
            found.append((role, item))
    return [(role, text) for role, text in found if role not in _NOT_MARKERS]


# String fields that are names or labels, not marker text.
_NOT_MARKERS = frozenset({
    "reasoning.mode", "reasoning.field", "content.mode", "tools.format.mode",
    "tools.format.variant", "tools.format.function_field", "tools.format.name_field",
    "tools.format.args_field", "tools.format.id_field", "tools.format.gen_id_field",
    "tools.arguments.literal_style", "tools.call_id.pos",
})
