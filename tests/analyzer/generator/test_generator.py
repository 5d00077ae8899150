"""Generated parsers on the small format templates: every reasoning, content and tool mode.

Each expectation is read off the template itself (templates_corpus/formats/*.jinja), not off
the parser's output: the output strings below are what those templates render for a call.
"""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from analyzer.analysis.pipeline import analyze
from analyzer.generator import ParseReport, PromptContext, generate_parser, parse_output
from analyzer.model import Analysis
from analyzer.parsing.message import Message
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import accumulate
from analyzer.render.loading import load_template_file, load_template_text

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "metric": {"type": "boolean"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather_alerts",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
]


@cache
def analysis_of(name: str) -> Analysis:
    return analyze(load_template_file(FORMATS / f"{name}.jinja"))


def parse(name: str, output: str, *, partial: bool = False, **options: Any) -> Message:
    if "tools" not in options:
        options["tools"] = TOOLS
    return parse_output(analysis_of(name), ParseOptions.make(**options), output, partial=partial)


def calls(message: Message) -> list[tuple[str, Any, str]]:
    return [(c.name, json.loads(c.arguments), c.id) for c in message.tool_calls]


# Reasoning modes ---------------------------------------------------------------------------


def test_tag_based_reasoning_is_split_from_content() -> None:
    message = parse("think_tag_based", "<think>plan it</think>The answer.")
    assert (message.reasoning_content, message.content) == ("plan it", "The answer.")


def test_reasoning_format_none_keeps_reasoning_in_content() -> None:
    message = parse("think_tag_based", "<think>plan it</think>The answer.", reasoning_format="none")
    assert (message.reasoning_content, message.content) == ("", "<think>plan it</think>The answer.")


def test_forced_open_prompt_makes_the_output_start_inside_reasoning() -> None:
    message = parse("think_forced_open", "plan it</think>The answer.", enable_thinking=True)
    # The prompt's `<think>\n`: its newline is the template's layout, not the model's reasoning.
    assert (message.reasoning_content, message.content.strip()) == ("plan it", "The answer.")


def test_forced_open_with_reasoning_none_shows_the_prompts_opening_in_content() -> None:
    message = parse(
        "think_forced_open",
        "plan it</think>The answer.",
        enable_thinking=True,
        reasoning_format="none",
    )
    assert message.content == "<think>\nplan it</think>The answer."


def test_forced_closed_prompt_leaves_the_output_to_content() -> None:
    message = parse("think_forced_closed", "The answer.", enable_thinking=False)
    # Nothing of the prompt's closed block (`<think>\n\n</think>`) shows as reasoning.
    assert (message.reasoning_content, message.content) == ("", "The answer.")


def test_a_reasoning_end_the_prompt_already_closed_is_dropped_and_noted() -> None:
    result = report("think_forced_closed", "plan it\n</think>\n\nThe answer.",
                    enable_thinking=False)
    assert kinds(result) == [("stray_reasoning_marker", "dropped")]
    assert result.deviations[0].offset == len("plan it\n")
    assert result.message.content == "plan it\n\n\nThe answer."
    assert result.message.reasoning_content == ""


def test_a_reasoning_end_before_anything_else_closes_an_empty_block_silently() -> None:
    result = report("think_forced_closed", "</think>\nThe answer.", enable_thinking=False)
    assert (kinds(result), result.message.content) == ([], "The answer.")


def test_unclosed_reasoning_stays_reasoning() -> None:
    message = parse(
        "think_forced_open", "still thinking when the budget ran out", enable_thinking=True
    )
    assert (message.reasoning_content.strip(), message.content) == (
        "still thinking when the budget ran out",
        "",
    )


def kinds(result: ParseReport) -> list[tuple[str, str]]:
    return [(d.kind, d.action) for d in result.deviations]


def test_a_start_marker_the_prompt_already_opened_is_dropped_and_noted() -> None:
    clean = report("think_forced_open", "plan it</think>The answer.", enable_thinking=True)
    assert clean.deviations == ()
    doubled = report("think_forced_open", "<think>\nplan it</think>The answer.",
                     enable_thinking=True)
    assert doubled.message.content == clean.message.content
    assert "<think>" not in doubled.message.reasoning_content
    assert doubled.message.reasoning_content.strip() == clean.message.reasoning_content.strip()
    assert kinds(doubled) == [("repeated_reasoning_start", "accepted")]
    assert (doubled.deviations[0].offset, doubled.deviations[0].expected) == (0, "one `<think>`")


def test_an_empty_block_after_a_start_marker_the_prompt_opened_stays_verbatim() -> None:
    # Nothing is recovered by dropping it; llama.cpp keeps `<think>` in the reasoning there.
    doubled = report("think_forced_open", "<think>\n\n</think>The answer.", enable_thinking=True)
    # (the prompt's own newline after its `<think>` is not part of it: llama.cpp's '<think>\n\n')
    assert doubled.message.reasoning_content == "<think>\n\n"
    assert doubled.message.content == "The answer."
    assert kinds(doubled) == [("repeated_reasoning_start", "kept_as_content")]


def test_a_start_marker_the_model_doubled_is_read_as_one_and_noted() -> None:
    clean = report("think_tag_based", "<think>plan it</think>The answer.")
    doubled = report("think_tag_based", "<think>\n<think>plan it</think>The answer.")
    assert doubled.message == clean.message
    assert kinds(doubled) == [("repeated_reasoning_start", "accepted")]
    assert doubled.deviations[0].offset == len("<think>\n")


def test_reasoning_between_two_pieces_of_content_is_read_and_noted() -> None:
    result = report("think_tag_based", "Hi.\n<think>hmm</think>\nBye.")
    # The text after the block is kept verbatim.
    assert (result.message.reasoning_content, result.message.content) == ("hmm", "Hi.\n\nBye.")
    assert kinds(result) == [("content_around_reasoning", "accepted")]
    assert result.deviations[0].offset == 4


def test_calls_inside_unclosed_reasoning_end_it_and_are_noted() -> None:
    qwen3 = FORMATS.parents[1].parent / "shared" / "corpus" / "templates" / "Qwen-Qwen3-0.6B.jinja"
    if not qwen3.is_file():
        pytest.skip(f"shared corpus template not found at {qwen3}")
    parser = generate_parser(analyze(load_template_file(qwen3)),
                             ParseOptions.make(tools=TOOLS, enable_thinking=True))
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    result = parser.parse_report("<think>I will check. " + call)
    assert [c.name for c in result.message.tool_calls] == ["get_weather"]
    assert result.message.reasoning_content.strip() == "I will check."
    assert kinds(result) == [("unclosed_reasoning", "accepted")]
    # Tool syntax quoted inside closed reasoning stays reasoning, with no note.
    quoted = parser.parse_report("<think>Say " + call + " later</think>Done.")
    assert quoted.message.tool_calls == () and quoted.deviations == ()


def test_an_end_of_sequence_text_ending_the_output_is_dropped_and_noted() -> None:
    output = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    clean = report("tools_json_native", output)
    ended = report("tools_json_native", output + "<|endoftext|>\n")
    assert ended.message == clean.message and clean.deviations == ()
    assert kinds(ended) == [("trailing_eos", "dropped")]
    assert ended.deviations[0].found == "`<|endoftext|>\\n`"


def test_the_tokenizers_own_end_of_sequence_text_is_the_one_dropped() -> None:
    config = json.dumps({"chat_template": (FORMATS / "tools_json_native.jinja").read_text(),
                         "eos_token": "<|stop_here|>"})
    analysis = analyze(load_template_text(config, filename="tokenizer_config.json"))
    assert analysis.eos_token == "<|stop_here|>"
    parser = generate_parser(analysis, ParseOptions.make(tools=TOOLS))
    ended = parser.parse_report("The answer.<|stop_here|>")
    assert ended.message.content == "The answer."
    assert kinds(ended) == [("trailing_eos", "dropped")]
    # A well-known end-of-sequence text of other tokenizers is this model's text.
    other = parser.parse_report("The answer.<|endoftext|>")
    assert (other.message.content, other.deviations) == ("The answer.<|endoftext|>", ())


def test_an_end_of_sequence_text_inside_the_output_stays_content() -> None:
    result = report("think_tag_based", "Use </s> to end a sequence.")
    assert result.message.content == "Use </s> to end a sequence." and result.deviations == ()


CALL_JSON = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'


def test_calls_in_a_markdown_fence_are_read_and_the_fence_noted() -> None:
    calls = f"<tool_call>\n{CALL_JSON}\n</tool_call>"
    clean = report("tools_json_native", "Sure.\n" + calls)
    fenced = report("tools_json_native", "Sure.\n```json\n" + calls + "\n```")
    assert fenced.message == clean.message and clean.deviations == ()
    assert kinds(fenced) == [("call_wrapper", "accepted")]
    assert fenced.deviations[0].offset == len("Sure.\n")
    # A fence around no call stays content, with no note.
    text = report("tools_json_native", "Use:\n```json\n{}\n```")
    assert text.message.content == "Use:\n```json\n{}\n```" and text.deviations == ()


def test_two_json_calls_in_one_wrapper_are_read_and_their_separator_noted() -> None:
    clean = report("tools_json_native", f"<tool_call>\n{CALL_JSON}\n</tool_call>\n"
                   f"<tool_call>\n{CALL_JSON}\n</tool_call>", parallel_tool_calls=True)
    for between in ("; ", "\n"):
        joined = report("tools_json_native", f"<tool_call>\n{CALL_JSON}{between}{CALL_JSON}\n"
                        "</tool_call>", parallel_tool_calls=True)
        assert joined.message == clean.message
        assert kinds(joined) == [("call_separator", "accepted")]


def test_a_turn_header_after_the_reasoning_end_is_not_content() -> None:
    analysis = analysis_of("think_tag_based")
    solar_like = dataclasses.replace(
        analysis, reasoning=dataclasses.replace(analysis.reasoning, after_end="<|assistant|>"))
    message = parse_output(solar_like, ParseOptions.make(),
                           "<think>plan</think><|assistant|>The answer.")
    assert (message.reasoning_content, message.content) == ("plan", "The answer.")


def test_delimiter_reasoning_runs_to_the_delimiter() -> None:
    message = parse("think_delimiter", "plan it\n[BEGIN FINAL RESPONSE]\nThe answer.")
    assert (message.reasoning_content.strip(), message.content.strip()) == (
        "plan it",
        "The answer.",
    )


def test_without_the_delimiter_everything_is_content() -> None:
    message = parse("think_delimiter", "The answer.")
    assert (message.reasoning_content, message.content) == ("", "The answer.")


def test_tools_only_reasoning_before_a_json_action() -> None:
    output = (
        '<|THINK|>need weather<|/THINK|><|ACTION|>[{"name": "get_weather", '
        '"arguments": {"city": "Paris"}}]<|/ACTION|>'
    )
    message = parse("think_tools_only", output)
    assert message.reasoning_content == "need weather"
    assert calls(message) == [("get_weather", {"city": "Paris"}, "")]


# Content modes -----------------------------------------------------------------------------


def test_plain_content_is_the_whole_output() -> None:
    assert parse("plain", "Hello\nthere").content == "Hello\nthere"


def test_a_turn_end_marker_is_not_content() -> None:
    assert parse("plain", "Hello<|end|>").content == "Hello"


def test_always_wrapped_content_loses_its_wrapper() -> None:
    assert parse("content_wrapped", "<response>Hi there</response>").content == "Hi there"


def test_content_wrapped_after_reasoning() -> None:
    message = parse("content_wrapped_with_reasoning", "<think>plan</think><answer>Hi</answer>")
    assert (message.reasoning_content, message.content) == ("plan", "Hi")


def test_response_format_json_in_a_fence() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    message = parse("plain", '```json\n{"a": 1}\n```', json_schema=schema)
    assert json.loads(message.content) == {"a": 1}


# Tool formats ------------------------------------------------------------------------------


def test_json_native_calls_between_per_call_markers() -> None:
    output = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
        '\n<tool_call>\n{"arguments": {"city": "Oslo"}, "name": "get_weather_alerts"}\n'
        "</tool_call>"
    )
    message = parse("tools_json_native", output, parallel_tool_calls=True)
    assert calls(message) == [
        ("get_weather", {"city": "Paris"}, ""),
        ("get_weather_alerts", {"city": "Oslo"}, ""),
    ]


def test_json_array_with_an_id_field() -> None:
    output = (
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]'
    )
    assert calls(parse("tools_json_array", output)) == [
        ("get_weather", {"city": "Paris"}, "a1b2c3d4e")
    ]


def test_markdown_block_with_renamed_fields() -> None:
    output = (
        'Action:\n```json\n[\n    {"tool_name": "get_weather", "parameters": '
        '{"city": "Paris"}}\n]\n```'
    )
    assert calls(parse("tools_markdown", output)) == [("get_weather", {"city": "Paris"}, "")]


def test_function_name_as_the_key() -> None:
    output = '<|tools_prefix|>[{"get_weather": {"city": "Paris", "days": 2}}]<|tools_suffix|>'
    assert calls(parse("tools_name_as_key", output)) == [
        ("get_weather", {"city": "Paris", "days": 2}, "")
    ]


def test_tag_with_json_arguments() -> None:
    output = 'Checking.<function=get_weather>{"city": "Paris"}</function>'
    message = parse("tools_tag_json", output)
    assert (message.content, calls(message)) == (
        "Checking.",
        [("get_weather", {"city": "Paris"}, "")],
    )


def test_tagged_arguments_are_typed_by_schema_even_in_python_spelling() -> None:
    output = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Jose\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    assert calls(parse("tools_tagged", output)) == [
        ("get_weather", {"city": "San Jose", "days": 3, "metric": True}, "")
    ]


def test_tagged_value_keeps_its_own_trailing_newline() -> None:
    output = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nline one\nline two\n\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    assert calls(parse("tools_tagged", output))[0][1] == {"city": "line one\nline two\n"}


def test_call_id_between_name_and_arguments() -> None:
    output = '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}'
    assert calls(parse("tools_bracket_id", output)) == [
        ("get_weather", {"city": "Paris"}, "a1b2c3d4e")
    ]


def test_call_id_before_the_name() -> None:
    output = (
        "<|tool_calls|><|call:begin|>call_7<|call:name|>get_weather<|call:args|>"
        '{"city": "Paris"}<|call:end|><|calls_end|>'
    )
    assert calls(parse("tools_id_first", output)) == [("get_weather", {"city": "Paris"}, "call_7")]


def test_call_id_after_the_arguments() -> None:
    output = '<call>get_weather<args>{"city": "Paris"}</args><id>call_9</id></call>'
    assert calls(parse("tools_id_after", output)) == [("get_weather", {"city": "Paris"}, "call_9")]


def test_an_indexed_call_is_named_by_its_whole_token() -> None:
    output = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    )
    assert calls(parse("tools_indexed", output)) == [
        ("get_weather", {"city": "Paris"}, "functions.get_weather:0")
    ]


def test_python_call_syntax_with_python_literals() -> None:
    output = "<|tool_call_start|>[get_weather(city='Paris', days=3, metric=False)]<|tool_call_end|>"
    assert calls(parse("tools_python_call", output)) == [
        ("get_weather", {"city": "Paris", "days": 3, "metric": False}, "")
    ]


def test_a_python_string_with_a_raw_newline_is_read() -> None:
    output = "<|tool_call_start|>[get_weather(city='Paris\nnorth\tside')]<|tool_call_end|>"
    assert calls(parse("tools_python_call", output)) == [
        ("get_weather", {"city": "Paris\nnorth\tside"}, "")]


def test_values_closed_by_a_tag_echoing_the_name() -> None:
    output = ('<tool_call><invoke name="get_weather"><city>Paris</city><days>3</days></invoke>'
              "</tool_call>")
    assert calls(parse("tools_echo", output)) == [("get_weather", {"city": "Paris", "days": 3}, "")]


def test_value_prefix_naming_the_json_type() -> None:
    output = (
        '<call tool="get_weather"><arg key="city" type="string">Paris</arg>'
        '<arg key="days" type="number">3</arg></call>'
    )
    assert calls(parse("tools_typed_attr", output)) == [
        ("get_weather", {"city": "Paris", "days": 3}, "")
    ]


# Never lose data ---------------------------------------------------------------------------


def test_a_call_of_an_undeclared_function_stays_visible_as_content() -> None:
    output = '<function=delete_everything>{"really": true}</function>'
    message = parse("tools_tag_json", output)
    assert (message.content, message.tool_calls) == (output, ())


def test_a_marker_that_starts_no_call_is_text() -> None:
    message = parse("tools_tagged", "Use <tool_call> tags like this.")
    assert (message.content, message.tool_calls) == ("Use <tool_call> tags like this.", ())


def test_text_after_the_calls_is_content() -> None:
    output = '<function=get_weather>{"city": "Paris"}</function>Anything else?'
    message = parse("tools_tag_json", output)
    assert (message.content, calls(message)) == ("Anything else?", [("get_weather",
                                                                      {"city": "Paris"}, "")])


def test_tool_choice_none_leaves_calls_as_text() -> None:
    output = '<function=get_weather>{"city": "Paris"}</function>'
    message = parse("tools_tag_json", output, tool_choice="none")
    assert (message.content, message.tool_calls) == (output, ())


def report(name: str, output: str, **options: Any) -> ParseReport:
    options.setdefault("tools", TOOLS)
    parser = generate_parser(analysis_of(name), ParseOptions.make(**options))
    return parser.parse_report(output)


def test_a_broken_call_keeps_what_was_read_and_is_a_malformed_call() -> None:
    output = '<function=get_weather>{"city": }</function> then <function=get_weather>{}</function>'
    result = report("tools_tag_json", output)
    # The broken call keeps its name, its arguments so far are closed into an object; the
    # text from the break on is read again: its sibling call is kept.
    assert calls(result.message) == [("get_weather", {"city": None}, ""),
                                     ("get_weather", {}, "")]
    [deviation] = result.deviations
    assert (deviation.kind, deviation.action) == ("malformed_call", "kept_as_content")
    assert deviation.offset == output.index("}") and "JSON value" in deviation.expected


def test_a_break_is_placed_in_the_output_not_in_the_prompts_tail() -> None:
    result = report("think_forced_open", 'plan</think>{"a": }', enable_thinking=True,
                    json_schema={"type": "object"})
    [deviation] = result.deviations
    assert (deviation.offset, deviation.line, deviation.column) == (18, 1, 19)
    assert result.message.reasoning_content.strip() == "plan"


# Partial output ----------------------------------------------------------------------------


def test_a_partial_marker_is_held_back() -> None:
    message = parse("tools_tagged", "Let me check.<tool_", partial=True)
    assert (message.content, message.tool_calls) == ("Let me check.", ())


def test_a_partial_call_is_named_with_unfinished_arguments() -> None:
    output = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
    message = parse("tools_json_native", output, partial=True)
    assert [c.name for c in message.tool_calls] == ["get_weather"]
    assert message.tool_calls[0].arguments.startswith('{"city": "Par')


# Generation and caching --------------------------------------------------------------------


def test_grammars_are_cached_per_analysis_and_options() -> None:
    options = ParseOptions.make(tools=TOOLS)
    first = generate_parser(analysis_of("tools_tagged"), options)
    second = generate_parser(analysis_of("tools_tagged"), ParseOptions.make(tools=TOOLS))
    assert first.parser is second.parser


def test_the_dump_names_the_rules_and_the_handler_is_auto() -> None:
    parser = generate_parser(analysis_of("tools_tagged"), ParseOptions.make(tools=TOOLS))
    assert parser.handler == "auto"
    assert "call-get_weather <- " in parser.dump()


def test_the_stream_equals_the_one_shot_parse() -> None:
    parser = generate_parser(
        analysis_of("think_forced_open"), ParseOptions.make(enable_thinking=True)
    )
    output = "plan it</think>The answer."
    stream = parser.stream()
    deltas = [d for ch in output for d in stream.feed(ch)] + stream.finish()
    reasoning = "".join(d.reasoning_content or "" for d in deltas)
    content = "".join(d.content or "" for d in deltas)
    one_shot = parser.parse(output)
    assert (reasoning, content) == (one_shot.reasoning_content, one_shot.content)


@pytest.mark.parametrize(
    ("name", "output", "content"),
    [
        ("tools_tag_json", 'Hi\n<function=get_weather>{"city": "Paris"}</function>\n\nDone',
         "Hi\n\n\nDone"),
        ("tools_tag_json", 'Hi <function=get_weather>{"city": "Paris"}</function> Done',
         "Hi  Done"),
        ("tools_tag_json", 'Hi<function=get_weather>{"city": "Paris"}</function>Done',
         "Hi\nDone"),
        ("tools_json_native",
         'Hi<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
         "Done", "Hi\nDone"),
        ("tools_python_call",
         "Hi<|tool_call_start|>[get_weather(city='Paris')]<|tool_call_end|>\tDone", "Hi\tDone"),
        ("tools_json_native",
         'Hi\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
         "\n", "Hi\n"),
    ],
)
def test_text_around_a_call_keeps_what_separated_it(name: str, output: str, content: str) -> None:
    message = parse(name, output)
    assert (message.content, [c[0] for c in calls(message)]) == (content, ["get_weather"])


# Arguments the schema does not declare -------------------------------------------------------


def test_an_undeclared_tagged_argument_is_read_into_the_call_with_the_ones_after_it() -> None:
    output = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=units>\ncelsius\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    message = parse("tools_tagged", output)
    assert (message.content, calls(message)) == (
        "", [("get_weather", {"city": "Paris", "units": "celsius", "days": 3}, "")])


@pytest.mark.parametrize(
    ("written", "value"),
    [("42", 42), ("2.5", 2.5), ("true", True), ("False", False), ('{"a": [1]}', {"a": [1]}),
     ("['x', 'y']", ["x", "y"]), ("null", None), ("two words", "two words"), ("{oops", "{oops")],
)
def test_an_undeclared_tagged_value_is_json_when_it_reads_as_json_else_text(
    written: str, value: Any
) -> None:
    output = (f"<tool_call>\n<function=get_weather_alerts>\n<parameter=extra>\n{written}\n"
              "</parameter>\n</function>\n</tool_call>")
    assert calls(parse("tools_tagged", output)) == [("get_weather_alerts", {"extra": value}, "")]


def test_undeclared_arguments_in_python_call_syntax() -> None:
    output = "<|tool_call_start|>[get_weather(city='Paris', zone='EU', n=2)]<|tool_call_end|>"
    message = parse("tools_python_call", output)
    assert (message.content, calls(message)) == (
        "", [("get_weather", {"city": "Paris", "zone": "EU", "n": 2}, "")])


def test_an_undeclared_argument_closed_by_its_echoed_name() -> None:
    output = ('<tool_call><invoke name="get_weather"><zone>EU</zone><city>Paris</city></invoke>'
              "</tool_call>")
    message = parse("tools_echo", output)
    assert (message.content, calls(message)) == (
        "", [("get_weather", {"zone": "EU", "city": "Paris"}, "")])


def test_an_undeclared_argument_keeps_the_type_its_marker_names() -> None:
    output = ('<call tool="get_weather"><arg key="code" type="string">42</arg>'
              '<arg key="n" type="number">7</arg></call>')
    assert calls(parse("tools_typed_attr", output)) == [
        ("get_weather", {"code": "42", "n": 7}, "")]


def test_an_undeclared_argument_streams_to_the_one_shot_message() -> None:
    parser = generate_parser(analysis_of("tools_tagged"), ParseOptions.make(tools=TOOLS))
    output = (
        "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=units>\ncelsius\n</parameter>\n"
        "<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    )
    one_shot = parser.parse(output)
    assert json.loads(one_shot.tool_calls[0].arguments) == {"units": "celsius", "city": "Paris"}
    for cut in range(len(output) + 1):
        stream = parser.stream()
        deltas = stream.feed(output[:cut]) + stream.feed(output[cut:]) + stream.finish()
        assert accumulate(deltas) == one_shot, f"split at {cut}"


# Problems: markers kept as text -------------------------------------------------------------


def test_a_call_of_an_unknown_function_is_kept_as_text_and_reported() -> None:
    output = 'Hi <tool_call>\n{"name": "unknown_fn", "arguments": {}}\n</tool_call>'
    parser = generate_parser(analysis_of("tools_json_native"), ParseOptions.make(tools=TOOLS))
    report = parser.parse_report(output)
    assert report.message == parser.parse(output)
    assert (report.message.content, report.message.tool_calls) == (output, ())
    (problem,) = report.problems
    assert (problem.kept, problem.kept_offset) == ("<tool_call>", 3)
    assert (problem.offset, problem.line, problem.column) == (output.index("unknown_fn"), 2, 11)
    assert problem.expected == ("`get_weather_alerts`", "`get_weather`")
    assert problem.context == '{"name": "unknown_fn", "arguments": {}}\n' + " " * 10 + "^"


def test_broken_json_after_a_call_marker_is_reported() -> None:
    output = '<tool_call>\n{"arguments": {"city": }, "name": "get_weather"}\n</tool_call>'
    parser = generate_parser(analysis_of("tools_json_native"), ParseOptions.make(tools=TOOLS))
    report = parser.parse_report(output)
    assert report.message.content == output
    (problem,) = report.problems
    assert problem.message.startswith(
        f"`<tool_call>` at offset 0 kept as text: expected a JSON value at offset "
        f"{output.index('}, ')} (line 2, column 24), found `}}")


def test_an_unknown_function_after_a_name_marker_is_reported_at_the_name() -> None:
    output = 'Use <function=delete_everything>{"really": true}</function>'
    report = generate_parser(analysis_of("tools_tag_json"),
                             ParseOptions.make(tools=TOOLS)).parse_report(output)
    (problem,) = report.problems
    # The whole call is kept as text, from its marker on.
    assert problem.kept.startswith("<function=delete_everything>")
    assert (problem.kept_offset, problem.offset) == (output.index("<"), output.index("delete"))
    assert problem.found == "`delete_everything>`"
    assert report.message.content == output
    assert [d.kind for d in report.deviations] == ["unknown_function"]


def test_a_call_that_parses_has_no_problem() -> None:
    output = '<function=get_weather>{"city": "Paris"}</function>'
    report = generate_parser(analysis_of("tools_tag_json"),
                             ParseOptions.make(tools=TOOLS)).parse_report(output)
    assert (len(report.message.tool_calls), report.problems) == (1, ())


def test_problems_are_placed_in_the_output_not_in_the_prompts_tail() -> None:
    analysis = analysis_of("tools_json_native")
    options = ParseOptions.make(tools=TOOLS)
    tail = "Earlier text\nthat the prompt ends with "
    parser = generate_parser(analysis, options, prompt=PromptContext("<prompt>" + tail, tail))
    output = 'x <tool_call>{"name": "nope"}</tool_call>'
    (problem,) = parser.parse_report(output).problems
    assert (problem.offset, problem.line, problem.column, problem.kept_offset) == (
        output.index("nope"), 1, output.index("nope") + 1, 2)
    stream = parser.stream()
    for char in output:
        stream.feed(char)
    stream.finish()
    assert [(q.offset, q.line, q.column, q.kept_offset) for q in stream.problems] == [
        (problem.offset, problem.line, problem.column, problem.kept_offset)]


def test_a_parse_report_has_a_canonical_json_form() -> None:
    output = 'Use <function=nope>{}</function>'
    report = generate_parser(analysis_of("tools_tag_json"),
                             ParseOptions.make(tools=TOOLS)).parse_report(output)
    data = report.to_dict()
    assert data["message"]["content"] == output
    assert [q["offset"] for q in data["problems"]] == [output.index("nope")]


def test_text_after_a_marker_kept_as_text_streams_at_once_without_rereading() -> None:
    parser = generate_parser(analysis_of("tools_tagged"), ParseOptions.make(tools=TOOLS))
    stream = parser.stream()
    stream.feed("Use <tool_call> tags")
    assert "".join(d.content or "" for d in stream.feed(" like this.")) == " like this."
    for _ in range(200):
        stream.feed("more text ")
    assert len(stream.stream.buffer) < 20  # only an undecided tail is kept, not the text


def test_text_after_calls_with_unmarked_ids_is_not_held_back() -> None:
    # The id has no opening marker: it runs to `<|call:name|>`, but not through any text.
    parser = generate_parser(analysis_of("tools_id_first"), ParseOptions.make(tools=TOOLS))
    calls_text = ("<|tool_calls|><|call:begin|>call_7<|call:name|>get_weather<|call:args|>"
                  '{"city": "Paris"}<|call:end|><|calls_end|>')
    output = calls_text + "then text " * 50
    stream = parser.stream()
    sent = "".join(d.content or "" for char in output for d in stream.feed(char))
    assert len(stream.stream.buffer) < 200
    assert sent.startswith("then text " * 30)
    stream.finish()
    assert stream.message() == parser.parse(output)
    assert calls(stream.message()) == [("get_weather", {"city": "Paris"}, "call_7")]


def test_a_stream_break_is_placed_in_the_output_past_the_prompts_tail() -> None:
    parser = generate_parser(analysis_of("think_forced_open"), ParseOptions.make(
        enable_thinking=True, json_schema={"type": "object"}))
    tail = parser.prompt.tail
    assert tail, "the template's prompt must leave a tail to read"
    stream = parser.stream()
    for char in 'plan</think>{"a": }':
        stream.feed(char)
    stream.finish()
    [deviation] = stream.deviations
    assert (deviation.offset, deviation.line, deviation.column) == (18, 1, 19)
    assert deviation.message.startswith("line 1, column 19 (offset 18): malformed_call: "
                                        "expected a JSON value")
