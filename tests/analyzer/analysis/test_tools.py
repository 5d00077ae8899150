"""T1-T7 and A1-A3 on templates written for each tool-call format.

Expected values are read off each template in templates_corpus/formats/.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from analyzer.analysis.pipeline import analyze
from analyzer.model import Analysis, CallIdPosition, ToolFormat, ToolsAnalysis

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


TYPED_ATTR = (FORMATS / "tools_typed_attr.jinja").read_text()


@cache
def analysis_of(name: str) -> Analysis:
    return analyze((FORMATS / f"{name}.jinja").read_text())


def tools_of(name: str) -> ToolsAnalysis:
    return analysis_of(name).tools


def test_no_tool_format_without_tool_calls_and_every_tool_comparison_skipped() -> None:
    analysis = analysis_of("plain")
    assert analysis.tools.format.mode == ToolFormat.NONE
    skipped = {c.id for c in analysis.comparisons if c.status == "skipped"}
    assert {"T1", "T2", "T3", "A1", "A2", "A3", "T5", "T6", "T7"} <= skipped


def test_json_native_per_call_markers_and_separator() -> None:
    fmt = tools_of("tools_json_native").format
    assert fmt.mode == ToolFormat.JSON_NATIVE
    assert (fmt.per_call_start, fmt.per_call_end) == ("<tool_call>", "</tool_call>")
    assert (fmt.section_start, fmt.section_end) == ("", "")
    assert fmt.call_separator == "\n"
    assert (fmt.name_field, fmt.args_field) == ("name", "arguments")
    assert fmt.parameter_order == ("name", "arguments")


def test_json_array_with_section_marker_and_id_field() -> None:
    fmt = tools_of("tools_json_array").format
    assert fmt.mode == ToolFormat.JSON_NATIVE
    assert fmt.section_start == "[TOOL_CALLS]" and fmt.section_end == ""
    assert fmt.tools_array_wrapped and fmt.call_separator == ", "
    assert fmt.id_field == "id"
    assert fmt.parameter_order == ("name", "arguments", "id")


def test_function_name_as_json_key() -> None:
    fmt = tools_of("tools_name_as_key").format
    assert fmt.fun_name_is_key and fmt.variant == "name-as-key"
    assert (fmt.name_field, fmt.args_field) == ("", "")
    assert (fmt.section_start, fmt.section_end) == ("<|tools_prefix|>", "<|tools_suffix|>")


def test_markdown_block_with_other_field_names() -> None:
    fmt = tools_of("tools_markdown").format
    assert fmt.variant == "markdown-block"
    assert fmt.section_start == "Action:\n```json" and fmt.section_end == "```"
    assert (fmt.name_field, fmt.args_field) == ("tool_name", "parameters")
    assert fmt.call_separator == ",\n    "


def test_tag_with_json_arguments() -> None:
    tools = tools_of("tools_tag_json")
    assert tools.format.mode == ToolFormat.TAG_WITH_JSON
    assert (tools.function.name_prefix, tools.function.name_suffix) == ("<function=", ">")
    assert tools.function.close == "</function>"
    assert tools.format.call_separator == ""


def test_tag_with_tagged_arguments() -> None:
    tools = tools_of("tools_tagged")
    assert tools.format.mode == ToolFormat.TAG_WITH_TAGGED
    assert (tools.format.per_call_start, tools.format.per_call_end) == (
        "<tool_call>", "</tool_call>")
    assert (tools.function.name_prefix, tools.function.name_suffix) == ("<function=", ">")
    assert tools.function.close == "</function>"
    args = tools.arguments
    assert (args.name_prefix, args.name_suffix) == ("<parameter=", ">")
    assert (args.value_prefix, args.value_suffix) == ("", "</parameter>")
    assert args.separator == "\n"
    assert args.literal_style == "python"  # {{ value }} prints True, not true


def test_python_call_syntax_with_quoted_strings() -> None:
    tools = tools_of("tools_python_call")
    fmt, args = tools.format, tools.arguments
    assert fmt.mode == ToolFormat.TAG_WITH_TAGGED
    assert (fmt.section_start, fmt.section_end) == ("<|tool_call_start|>[", "]<|tool_call_end|>")
    assert fmt.call_separator == ", "
    assert tools.function.name_suffix == "(" and args.end == ")"
    assert (args.name_suffix, args.value_prefix, args.value_suffix) == ("=", "'", "'")
    assert (args.typed_value_prefix, args.typed_value_suffix) == ("", "")
    assert args.separator == ", " and args.literal_style == "python"


def test_call_id_between_name_and_arguments() -> None:
    tools = tools_of("tools_bracket_id")
    assert tools.format.per_call_start == "[TOOL_CALLS]"
    assert tools.call_id.pos == CallIdPosition.BETWEEN_FUNC_AND_ARGS
    assert (tools.call_id.prefix, tools.call_id.suffix) == ("[CALL_ID]", "")
    assert tools.arguments.start == "[ARGS]"
    assert tools.format.variant == "bracket-tag"


def test_call_id_before_the_name() -> None:
    tools = tools_of("tools_id_first")
    assert tools.call_id.pos == CallIdPosition.PRE_FUNC_NAME
    assert tools.format.per_call_start == "<|call:begin|>"
    assert tools.function.name_prefix == "<|call:name|>"
    assert tools.arguments.start == "<|call:args|>"
    assert (tools.format.per_call_end, tools.format.section_end) == ("<|call:end|>",
                                                                     "<|calls_end|>")


def test_call_index_after_the_name() -> None:
    tools = tools_of("tools_indexed")
    assert tools.format.variant == "prefixed-indexed"
    assert tools.format.section_start == "<|tool_calls_section_begin|>"
    assert tools.format.per_call_start == "<|tool_call_begin|>"
    assert tools.function.name_prefix == "functions."
    assert tools.call_index.present and tools.call_index.base == 0
    assert (tools.call_index.prefix, tools.call_index.suffix) == (":", "")
    assert tools.arguments.start == "<|tool_call_argument_begin|>"
    assert tools.format.per_call_end == "<|tool_call_end|>"


def test_tool_markers_point_at_their_text_in_their_comparison() -> None:
    for name in ("tools_tagged", "tools_indexed", "tools_bracket_id", "tools_python_call"):
        analysis = analysis_of(name)
        by_id = {c.id: c for c in analysis.comparisons}
        tool_markers = [m for m in analysis.markers if m.role.startswith("tools.")]
        assert tool_markers
        for marker in tool_markers:
            comparison = by_id[marker.comparison]
            assert marker.span_a is not None or marker.span_b is not None
            if marker.span_a is not None and comparison.variant_a is not None:
                assert comparison.variant_a.rendered[marker.span_a.start : marker.span_a.end] \
                    == marker.text
            if marker.span_b is not None and comparison.variant_b is not None:
                assert comparison.variant_b.rendered[marker.span_b.start : marker.span_b.end] \
                    == marker.text


def test_json_literals_are_recognized_in_tagged_arguments() -> None:
    source = ("{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}"
              "<fn name={{ c.function.name }}>{% for k, v in c.function.arguments.items() %}"
              "<arg k={{ k }}>{{ v | tojson }}</arg>{% endfor %}</fn>{% endfor %}"
              "{% else %}{{ m.content }}{% endif %}{% endfor %}")
    args = analyze(source).tools.arguments
    assert args.literal_style == "json"
    assert (args.value_prefix, args.value_suffix) == ('"', '"</arg>')
    assert (args.typed_value_prefix, args.typed_value_suffix) == ("", "</arg>")


def test_call_id_after_the_arguments() -> None:
    tools = tools_of("tools_id_after")  # <call>name<args>{json}</args><id>ID</id></call>
    assert tools.call_id.pos == CallIdPosition.POST_ARGS
    assert (tools.call_id.prefix, tools.call_id.suffix) == ("<id>", "</id>")
    assert (tools.arguments.start, tools.arguments.end) == ("<args>", "</args>")
    assert (tools.format.per_call_start, tools.format.per_call_end) == ("<call>", "</call>")
    assert tools.function.close == ""


def test_a_closing_tag_that_repeats_the_argument_name() -> None:
    tools = tools_of("tools_echo")  # <invoke name="f"><city>Paris</city></invoke>
    args = tools.arguments
    assert (args.name_prefix, args.name_suffix) == ("<", ">")
    assert args.suffix_echoes_name
    assert (args.value_suffix, args.echo_suffix) == ("</", ">")
    assert (tools.function.name_prefix, tools.function.name_suffix) == ('<invoke name="', '">')
    assert tools.function.close == "</invoke>"
    assert tools.format.section_start == "<tool_call>"


def test_value_prefixes_that_name_the_json_type() -> None:
    args = tools_of("tools_typed_attr").arguments  # <arg key="k" type="number">7</arg>
    assert (args.name_prefix, args.name_suffix) == ('<arg key="', '" type="')
    assert args.value_prefix == 'string">'
    prefixes = {entry.json_type: entry.prefix for entry in args.typed_prefixes}
    # kind() has no branch for none: a null falls through to "array".
    assert prefixes == {"boolean": 'boolean">', "number": 'number">', "object": 'object">',
                        "array": 'array">', "null": 'array">'}


def test_a_null_typed_prefix_is_found_after_the_type_name_that_spells_null() -> None:
    # `type="null">null`: the first "null" is the type name, the value is the one before </arg>.
    source = TYPED_ATTR.replace("{%- else -%}array", "{%- elif v is none -%}null{%- else -%}array")
    prefixes = {e.json_type: e.prefix for e in analyze(source).tools.arguments.typed_prefixes}
    assert prefixes["null"] == 'null">' and prefixes["number"] == 'number">'


def test_a_template_that_drops_null_arguments_keeps_the_other_typed_prefixes() -> None:
    source = TYPED_ATTR.replace("{%- for name, value in call.function.arguments.items() -%}",
                                "{%- for name, value in call.function.arguments.items()"
                                " if value is not none -%}")
    prefixes = {e.json_type: e.prefix for e in analyze(source).tools.arguments.typed_prefixes}
    assert prefixes == {"boolean": 'boolean">', "number": 'number">', "object": 'object">',
                        "array": 'array">'}


def test_no_per_type_prefixes_when_every_type_looks_alike() -> None:
    assert tools_of("tools_tagged").arguments.typed_prefixes == ()


# Every tag is `<|open|>NAME attrs<|sep|>` or `<|close|>NAME<|sep|>`, as Kimi-K3 writes them.
SEP_TAGS = (
    "{%- for m in messages -%}<|open|>{{ m.role }}<|sep|>"
    "{%- if m.tool_calls -%}<|open|>tools<|sep|>"
    "{%- for c in m.tool_calls -%}<|open|>call tool=\"{{ c.function.name }}\"<|sep|>"
    "{{ c.function.arguments | tojson }}<|close|>call<|sep|>{%- endfor -%}<|close|>tools<|sep|>"
    "{%- else -%}{{ m.content }}{%- endif -%}<|close|>{{ m.role }}<|sep|>{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|open|>assistant<|sep|>{%- endif -%}"
)


def test_the_marker_closing_a_tag_name_stays_with_that_tag() -> None:
    # Two calls in a row read `...<|close|>call<|sep|><|open|>call...`: the `<|sep|>` ends
    # `<|close|>call`, it does not open the next call.
    layout = analyze(SEP_TAGS).tools.format
    assert (layout.section_start, layout.section_end) == ("<|open|>tools<|sep|>",
                                                          "<|close|>tools<|sep|>")
    assert (layout.per_call_start, layout.per_call_end) == ("<|open|>", "<|close|>call<|sep|>")


def test_the_whitespace_around_a_tagged_value_is_kept_as_padding() -> None:
    # tools_tagged writes `<parameter={{ name }}>` NEWLINE `{{ value }}` NEWLINE `</parameter>`.
    args = tools_of("tools_tagged").arguments
    assert (args.value_prefix, args.value_suffix) == ("", "</parameter>")
    assert args.value_padding == ("\n", "\n")


def test_a_value_written_right_against_its_tags_has_no_padding() -> None:
    assert tools_of("tools_typed_attr").arguments.value_padding == ("", "")
