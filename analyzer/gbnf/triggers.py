"""Where tool calls begin: trigger words or patterns, and the text content must avoid."""

from __future__ import annotations

import re
from collections.abc import Sequence

from analyzer.gbnf.result import Trigger, TriggerKind
from analyzer.gbnf.tool_specs import ToolSpec
from analyzer.model import Analysis, CallIdPosition, ToolFormat, ToolsAnalysis

_REGEX_SPECIAL = re.compile(r"([\\^$.|?*+()\[\]{}/-])")


def regex_escape(text: str) -> str:
    """Escape text for an ECMAScript regex (llama.cpp compiles triggers with std::regex)."""
    return _REGEX_SPECIAL.sub(r"\\\1", text)


def call_openers(tools: ToolsAnalysis) -> tuple[str, ...]:
    """Fixed words that every tool-call section starts with (empty if there are none)."""
    fmt, function, call_id = tools.format, tools.function, tools.call_id
    for marker in (fmt.section_start, fmt.per_call_start):
        if marker.strip():
            return (marker.strip(),)
    if fmt.mode == ToolFormat.JSON_NATIVE or not function.name_prefix.strip():
        return ()
    if call_id.pos == CallIdPosition.PRE_FUNC_NAME and call_id.prefix.strip():
        return (call_id.prefix.strip(), function.name_prefix.strip())
    return (function.name_prefix.strip(),)


def _json_first_keys(tools: ToolsAnalysis, specs: Sequence[ToolSpec]) -> list[str]:
    fmt = tools.format
    if fmt.fun_name_is_key:
        return [spec.name for spec in specs]
    heads = [fmt.function_field, fmt.name_field, fmt.args_field, fmt.id_field, fmt.gen_id_field]
    return list(dict.fromkeys(h.split(".")[0] for h in heads if h))


def _json_pattern(tools: ToolsAnalysis, specs: Sequence[ToolSpec]) -> str:
    keys = "|".join(regex_escape(k) for k in _json_first_keys(tools, specs))
    array = r"\[\s*" if tools.format.tools_array_wrapped else ""
    quote = "[\"']"
    return rf"^\s*({array}\{{\s*{quote}(?:{keys}){quote})[\s\S]*$"


def _names_pattern(tools: ToolsAnalysis, specs: Sequence[ToolSpec]) -> str:
    suffix = regex_escape(tools.function.name_suffix.strip())
    names = "|".join(regex_escape(spec.name) for spec in specs)
    return rf"((?:{names}){suffix})"


def call_triggers(tools: ToolsAnalysis, specs: Sequence[ToolSpec]) -> tuple[Trigger, ...]:
    """Say what switches a lazy tool-call grammar on."""
    words = call_openers(tools)
    if words:
        return tuple(Trigger(TriggerKind.WORD, word) for word in words)
    if tools.format.mode == ToolFormat.JSON_NATIVE:
        return (Trigger(TriggerKind.PATTERN_FULL, _json_pattern(tools, specs)),)
    return (Trigger(TriggerKind.PATTERN, _names_pattern(tools, specs)),)


def content_stops(tools: ToolsAnalysis, specs: Sequence[ToolSpec]) -> tuple[str, ...]:
    """Text that plain content before the calls must not contain (it would start a call)."""
    words = call_openers(tools)
    if words:
        return words
    if tools.format.mode == ToolFormat.JSON_NATIVE:
        return ("[" if tools.format.tools_array_wrapped else "{",)
    suffix = tools.function.name_suffix.strip()
    return tuple(spec.name + suffix for spec in specs)


def preserved_tokens(analysis: Analysis) -> tuple[str, ...]:
    """Tokens to keep whole: the analysis' own list plus the structural markers."""
    fmt, reasoning, content = analysis.tools.format, analysis.reasoning, analysis.content
    structural = (reasoning.start, reasoning.end, content.start, content.end, fmt.section_start,
                  fmt.section_end, fmt.per_call_start, fmt.per_call_end)
    found = [*analysis.preserved_tokens, *(m.strip() for m in structural)]
    return tuple(dict.fromkeys(t for t in found if t))
