"""Immutable values that make up an analysis (draft contract shared by all stages).

Every value is a frozen dataclass and has a canonical JSON form (see `analyzer.canonical`).
Field names here are the JSON keys the lab and regression diffs read: rename with care.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ReasoningMode(StrEnum):
    NONE = "NONE"
    TAG_BASED = "TAG_BASED"
    DELIMITER = "DELIMITER"
    FORCED_OPEN = "FORCED_OPEN"
    FORCED_CLOSED = "FORCED_CLOSED"
    TOOLS_ONLY = "TOOLS_ONLY"


class ContentMode(StrEnum):
    PLAIN = "PLAIN"
    ALWAYS_WRAPPED = "ALWAYS_WRAPPED"
    WRAPPED_WITH_REASONING = "WRAPPED_WITH_REASONING"


class ToolFormat(StrEnum):
    NONE = "NONE"
    JSON_NATIVE = "JSON_NATIVE"
    TAG_WITH_JSON = "TAG_WITH_JSON"
    TAG_WITH_TAGGED = "TAG_WITH_TAGGED"


class CallIdPosition(StrEnum):
    NONE = "NONE"
    PRE_FUNC_NAME = "PRE_FUNC_NAME"
    BETWEEN_FUNC_AND_ARGS = "BETWEEN_FUNC_AND_ARGS"
    POST_ARGS = "POST_ARGS"


@dataclass(frozen=True)
class Span:
    """Half-open character range [start, end) in one rendered variant."""

    start: int
    end: int


@dataclass(frozen=True)
class DiffSplit:
    """Two renders cut into common prefix, the differing middles, and common suffix."""

    prefix: str
    left: str
    right: str
    suffix: str


@dataclass(frozen=True)
class Variant:
    """One rendering of the template: what was asked, and what came out."""

    label: str
    params: str  # canonical JSON of the render inputs (messages, tools, kwargs)
    rendered: str


@dataclass(frozen=True)
class Comparison:
    """A variant pair, its diff, and whether the template accepted both renders."""

    id: str  # "R1", "T3", "A2", ...
    title: str
    variant_a: Variant | None
    variant_b: Variant | None
    diff: DiffSplit | None
    status: str  # "ok" | "unsupported" (template refused a variant) | "skipped"
    note: str = ""


@dataclass(frozen=True)
class Marker:
    """A marker string read off a comparison, with where it sits in both renders."""

    role: str  # dotted field name, e.g. "reasoning.start", "tools.function.name_prefix"
    text: str
    comparison: str  # Comparison.id that produced it
    span_a: Span | None  # location in variant_a.rendered, None if absent there
    span_b: Span | None  # location in variant_b.rendered, None if absent there


@dataclass(frozen=True)
class Capabilities:
    supports_system_role: bool = False
    supports_tools: bool = False
    supports_tool_calls: bool = False
    supports_tool_responses: bool = False
    supports_parallel_tool_calls: bool = False
    supports_tool_call_id: bool = False
    requires_object_arguments: bool = False  # arguments must be a dict, not a JSON string
    supports_string_arguments: bool = False
    requires_typed_content: bool = False
    requires_non_null_content: bool = False
    template_kwargs: tuple[str, ...] = ()  # extra variables the template reads


@dataclass(frozen=True)
class ReasoningAnalysis:
    mode: ReasoningMode = ReasoningMode.NONE
    start: str = ""
    end: str = ""


@dataclass(frozen=True)
class ContentAnalysis:
    mode: ContentMode = ContentMode.PLAIN
    start: str = ""
    end: str = ""
    requires_nonnull_content: bool = False


@dataclass(frozen=True)
class ToolFormatAnalysis:
    mode: ToolFormat = ToolFormat.NONE
    section_start: str = ""
    section_end: str = ""
    per_call_start: str = ""
    per_call_end: str = ""
    call_separator: str = ""
    function_field: str = ""
    name_field: str = "name"
    args_field: str = "arguments"
    id_field: str = ""
    gen_id_field: str = ""
    fun_name_is_key: bool = False
    tools_array_wrapped: bool = False
    uses_python_dicts: bool = False


@dataclass(frozen=True)
class FunctionAnalysis:
    name_prefix: str = ""
    name_suffix: str = ""
    close: str = ""


@dataclass(frozen=True)
class ArgumentsAnalysis:
    start: str = ""
    end: str = ""
    name_prefix: str = ""
    name_suffix: str = ""
    value_prefix: str = ""
    value_suffix: str = ""
    separator: str = ""


@dataclass(frozen=True)
class CallIdAnalysis:
    pos: CallIdPosition = CallIdPosition.NONE
    prefix: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class ToolsAnalysis:
    format: ToolFormatAnalysis = field(default_factory=ToolFormatAnalysis)
    function: FunctionAnalysis = field(default_factory=FunctionAnalysis)
    arguments: ArgumentsAnalysis = field(default_factory=ArgumentsAnalysis)
    call_id: CallIdAnalysis = field(default_factory=CallIdAnalysis)


@dataclass(frozen=True)
class GenerationPrompt:
    """What add_generation_prompt appends, for one enable_thinking setting."""

    enable_thinking: bool | None  # None = variable left unset
    text: str
    label: str  # "forced-open", "closed", "model's choice"


@dataclass(frozen=True)
class Analysis:
    analyzer_version: str
    template_sha256: str
    template_name: str  # "default" or the named template picked
    handler: str  # "auto" or a dedicated handler's name
    caps: Capabilities
    reasoning: ReasoningAnalysis
    content: ContentAnalysis
    tools: ToolsAnalysis
    preserved_tokens: tuple[str, ...]
    markers: tuple[Marker, ...]
    comparisons: tuple[Comparison, ...]
    generation_prompts: tuple[GenerationPrompt, ...]
    workarounds: tuple[str, ...]  # names of workarounds applied
