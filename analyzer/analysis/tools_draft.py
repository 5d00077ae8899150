"""A mutable draft of the tool analysis, filled comparison by comparison, then frozen."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.model import (
    ArgumentsAnalysis,
    CallIdAnalysis,
    CallIdPosition,
    CallIndexAnalysis,
    FunctionAnalysis,
    ToolFormat,
    ToolFormatAnalysis,
    ToolsAnalysis,
    TypedPrefix,
)


@dataclass
class ToolDraft:
    """Every tool field as it is being discovered."""

    mode: ToolFormat = ToolFormat.NONE
    variant: str = ""
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
    parameter_order: list[str] = field(default_factory=list)
    fun_name_is_key: bool = False
    tools_array_wrapped: bool = False
    uses_python_dicts: bool = False
    name_prefix: str = ""
    name_suffix: str = ""
    close: str = ""
    args_start: str = ""
    args_end: str = ""
    arg_name_prefix: str = ""
    arg_name_suffix: str = ""
    value_prefix: str = ""
    value_suffix: str = ""
    typed_value_prefix: str = ""
    typed_value_suffix: str = ""
    arg_separator: str = ""
    literal_style: str = "json"
    suffix_echoes_name: bool = False
    echo_suffix: str = ""
    typed_prefixes: list[TypedPrefix] = field(default_factory=list)
    value_padding: tuple[str, str] = ("", "")
    id_pos: CallIdPosition = CallIdPosition.NONE
    id_prefix: str = ""
    id_suffix: str = ""
    index_present: bool = False
    index_base: int = 0
    index_prefix: str = ""
    index_suffix: str = ""

    def freeze(self) -> ToolsAnalysis:
        """Return the immutable analysis this draft describes."""
        return ToolsAnalysis(
            format=ToolFormatAnalysis(
                self.mode, self.section_start, self.section_end, self.per_call_start,
                self.per_call_end, self.call_separator, self.function_field, self.name_field,
                self.args_field, self.id_field, self.gen_id_field, tuple(self.parameter_order),
                self.fun_name_is_key, self.tools_array_wrapped, self.uses_python_dicts,
                self.variant,
            ),
            function=FunctionAnalysis(self.name_prefix, self.name_suffix, self.close),
            arguments=ArgumentsAnalysis(
                self.args_start, self.args_end, self.arg_name_prefix, self.arg_name_suffix,
                self.value_prefix, self.value_suffix, self.typed_value_prefix,
                self.typed_value_suffix, self.arg_separator, self.literal_style,
                self.suffix_echoes_name, self.echo_suffix, tuple(self.typed_prefixes),
                self.value_padding,
            ),
            call_id=CallIdAnalysis(self.id_pos, self.id_prefix, self.id_suffix),
            call_index=CallIndexAnalysis(
                self.index_present, self.index_base, self.index_prefix, self.index_suffix
            ),
        )
