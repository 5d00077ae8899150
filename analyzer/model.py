"""Immutable values that make up an analysis (the contract shared by all stages).

Every value is a frozen dataclass and has a canonical JSON form (see `analyzer.canonical`).
Field names here are the JSON keys the lab and regression diffs read: rename with care.

Marker strings are exact substrings of the template's renders; an empty string means
"absent". Spans are Python string indices (code points) into `Variant.rendered`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ReasoningMode(StrEnum):
    """How the template delimits the model's reasoning."""

    NONE = "NONE"  # no reasoning markers found
    TAG_BASED = "TAG_BASED"  # optional start ... end block, e.g. <think>...</think>
    DELIMITER = "DELIMITER"  # no start marker: reasoning runs until `end`
    FORCED_OPEN = "FORCED_OPEN"  # the generation prompt ends with `start` when thinking is on
    FORCED_CLOSED = "FORCED_CLOSED"  # forced open when on, an empty closed block when off
    TOOLS_ONLY = "TOOLS_ONLY"  # reasoning is rendered only next to tool calls


class ContentMode(StrEnum):
    """How the template wraps the assistant's visible answer."""

    PLAIN = "PLAIN"
    ALWAYS_WRAPPED = "ALWAYS_WRAPPED"
    WRAPPED_WITH_REASONING = "WRAPPED_WITH_REASONING"


class RenderMode(StrEnum):
    """How templates were rendered: exactly as transformers does, or leniently."""

    HF = "hf"  # byte-for-byte transformers' apply_chat_template, refusals included
    # Also what llama.cpp's Jinja allows and transformers refuses: in-place changes to lists
    # and dicts the template built, tojson of a generator (a `map(...)` result).
    LENIENT = "lenient"


class ToolFormat(StrEnum):
    """Where the function name and the arguments live in a rendered tool call."""

    NONE = "NONE"
    JSON_NATIVE = "JSON_NATIVE"  # name and arguments inside one JSON object
    TAG_WITH_JSON = "TAG_WITH_JSON"  # name outside JSON, arguments a JSON object
    TAG_WITH_TAGGED = "TAG_WITH_TAGGED"  # name and each argument in their own markers


class CallIdPosition(StrEnum):
    """Where a tag-based call renders the call id."""

    NONE = "NONE"
    PRE_FUNC_NAME = "PRE_FUNC_NAME"
    BETWEEN_FUNC_AND_ARGS = "BETWEEN_FUNC_AND_ARGS"
    POST_ARGS = "POST_ARGS"


class SegmentKind(StrEnum):
    MARKER = "MARKER"  # a whole `<...>` or `[...]` token
    TEXT = "TEXT"


@dataclass(frozen=True)
class Segment:
    """A piece of rendered text: one marker, or the text between markers."""

    kind: SegmentKind
    value: str


@dataclass(frozen=True)
class Span:
    """Half-open character range [start, end) in one rendered variant."""

    start: int
    end: int


@dataclass(frozen=True)
class DiffSplit:
    """Two renders cut into common prefix, the differing middles, and common suffix.

    `prefix + left + suffix` is the first text and `prefix + right + suffix` the second.
    """

    prefix: str
    left: str
    right: str
    suffix: str


@dataclass(frozen=True)
class Variant:
    """One rendering of the template: what was asked, and what came out."""

    label: str
    params: str  # canonical JSON of the render inputs (messages, tools, kwargs)
    rendered: str  # "" when the template refused the input (see Comparison.note)


@dataclass(frozen=True)
class Comparison:
    """A variant pair, its diff, and whether the template accepted both renders."""

    id: str  # "R1", "T3", "A2", ...
    title: str
    variant_a: Variant | None
    variant_b: Variant | None
    diff: DiffSplit | None
    status: str  # "ok" | "unsupported" (template refused a variant) | "skipped"
    note: str = ""  # the template's own message when unsupported, or why skipped


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
    """What the template accepts and shows, found by rendering probes."""

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
    field: str = ""  # message key the template reads reasoning from, e.g. "reasoning_content"
    # Written right after `end`, before the answer or calls, when reasoning is a turn of its
    # own: Solar Open's `<|think|>R<|end|>` then `<|begin|>assistant` opens the answer's turn.
    after_end: str = ""


@dataclass(frozen=True)
class ContentAnalysis:
    mode: ContentMode = ContentMode.PLAIN
    start: str = ""
    end: str = ""
    requires_nonnull_content: bool = False
    # Markers that open and close an assistant turn (not content): a model may repeat them
    # in its output, e.g. Command R+'s `<|CHATBOT_TOKEN|>` ... `<|END_OF_TURN_TOKEN|>`.
    turn_start: str = ""
    turn_end: str = ""


@dataclass(frozen=True)
class ToolFormatAnalysis:
    """Section and per-call structure, and JSON field names for JSON formats."""

    mode: ToolFormat = ToolFormat.NONE
    section_start: str = ""  # once before all calls
    section_end: str = ""  # once after all calls
    per_call_start: str = ""  # before each call
    per_call_end: str = ""  # after each call
    call_separator: str = ""  # between two calls (whitespace kept exactly)
    function_field: str = ""  # JSON: key of a nested function object, e.g. "function"
    name_field: str = "name"  # JSON: key of the name, dotted when nested
    args_field: str = "arguments"  # JSON: key of the arguments, dotted when nested
    id_field: str = ""  # JSON: key that carries the call's id
    gen_id_field: str = ""  # JSON: key of an id the template makes up (e.g. an index)
    parameter_order: tuple[str, ...] = ()  # JSON: the keys above in rendered order
    fun_name_is_key: bool = False  # JSON: {"name": {args}}
    tools_array_wrapped: bool = False  # JSON: calls inside a [...] array
    uses_python_dicts: bool = False  # single-quoted keys and strings
    variant: str = ""  # descriptive kind: json-native, name-as-key, markdown-block,
    # bracket-tag, prefixed-indexed, tagged-json, tagged-args


@dataclass(frozen=True)
class FunctionAnalysis:
    name_prefix: str = ""  # right before the function name (after per-call start)
    name_suffix: str = ""  # right after the name, up to the arguments
    close: str = ""  # after the arguments, before the per-call/section end


@dataclass(frozen=True)
class TypedPrefix:
    """The value prefix a template writes for one JSON type (Kimi-K3's `type="number"`)."""

    json_type: str  # "boolean", "number", "object", "array" or "null"
    prefix: str


@dataclass(frozen=True)
class ArgumentsAnalysis:
    """Argument container and, for tagged arguments, the markers of one argument."""

    start: str = ""  # opens the argument list
    end: str = ""  # closes the argument list
    name_prefix: str = ""  # before each argument name
    name_suffix: str = ""  # after each argument name, before the value prefix
    value_prefix: str = ""  # before a string value
    value_suffix: str = ""  # after a string value
    typed_value_prefix: str = ""  # before a non-string (JSON-like) value
    typed_value_suffix: str = ""  # after a non-string value
    separator: str = ""  # between two arguments
    literal_style: str = "json"  # non-string values: "json" (true/null) or "python" (True/None)
    # A value may be closed by a tag that repeats the argument's name (MiniMax-M3's
    # `<city>Tokyo</city>`): the suffix is then value_suffix + KEY + echo_suffix.
    suffix_echoes_name: bool = False
    echo_suffix: str = ""
    # Set only when non-string prefixes differ by JSON type; typed_value_prefix is then the
    # boolean one.
    typed_prefixes: tuple[TypedPrefix, ...] = ()
    # The whitespace the template writes right before and right after a string value (the
    # markers exclude it): Qwen3-Coder's `<parameter=k>\nV\n</parameter>` gives ("\n", "\n").
    value_padding: tuple[str, str] = ("", "")


@dataclass(frozen=True)
class CallIdAnalysis:
    pos: CallIdPosition = CallIdPosition.NONE
    prefix: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class CallIndexAnalysis:
    """A per-call counter the template writes into each call (Kimi's `name:0`)."""

    present: bool = False
    base: int = 0  # number written for the first call
    prefix: str = ""  # right before the number
    suffix: str = ""  # right after the number


@dataclass(frozen=True)
class ToolsAnalysis:
    """Everything needed to parse tool calls.

    JSON_NATIVE: section_start [ per_call_start CALL_JSON per_call_end call_separator ... ]
    section_end, where CALL_JSON is an object whose keys are the `*_field`s (or, with
    fun_name_is_key, `{NAME: ARGS}`), inside `[...]` when tools_array_wrapped.

    Tag-based (TAG_WITH_JSON, TAG_WITH_TAGGED), one call reads:

        per_call_start [call id if PRE_FUNC_NAME] function.name_prefix NAME
        function.name_suffix [call_index.prefix N call_index.suffix]
        [call_id.prefix ID call_id.suffix if BETWEEN_FUNC_AND_ARGS]
        arguments.start ARGS arguments.end [call id if POST_ARGS] function.close per_call_end

    ARGS is a JSON object (TAG_WITH_JSON) or, for TAG_WITH_TAGGED, arguments joined by
    arguments.separator, each `name_prefix KEY name_suffix VALUE`, where a string VALUE is
    `value_prefix TEXT value_suffix` and any other is `typed_value_prefix LITERAL
    typed_value_suffix` (LITERAL in JSON or Python spelling, see literal_style; when
    typed_prefixes is set, the prefix depends on the literal's JSON type); with
    suffix_echoes_name, each suffix is followed by KEY and echo_suffix. Calls are
    joined by format.call_separator inside section_start ... section_end. Markers never
    include the whitespace around them; a parser should accept whitespace between pieces.
    """

    format: ToolFormatAnalysis = field(default_factory=ToolFormatAnalysis)
    function: FunctionAnalysis = field(default_factory=FunctionAnalysis)
    arguments: ArgumentsAnalysis = field(default_factory=ArgumentsAnalysis)
    call_id: CallIdAnalysis = field(default_factory=CallIdAnalysis)
    call_index: CallIndexAnalysis = field(default_factory=CallIndexAnalysis)


@dataclass(frozen=True)
class GenerationPrompt:
    """What add_generation_prompt appends, for one enable_thinking setting."""

    enable_thinking: bool | None  # None = variable left unset
    text: str
    label: str  # "forced-open", "closed", "model's choice"; "unsupported" if it failed


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
    render_mode: RenderMode = RenderMode.HF
    render_note: str = ""  # why the analysis rendered leniently: what transformers refused
    # The tokenizer's end-of-sequence text, when the template came with its tokenizer_config
    # ("" otherwise): a parser drops it at the very end of an output.
    eos_token: str = ""
