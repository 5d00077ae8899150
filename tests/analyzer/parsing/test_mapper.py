"""Mapping captures to an OpenAI message: typing by schema, python quotes, call assembly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from analyzer import peg as p
from analyzer.parsing.mapper import MessageBuilder, string_value, to_message, type_tagged_value
from analyzer.parsing.message import Message, ToolCall
from analyzer.peg import Role, ValueType
from analyzer.peg.roles import CONTINUED, PARTIAL


def tagged_parser(properties: dict[str, Any]) -> p.Parser:
    """`<function=f>` then `<parameter=NAME>VALUE</parameter>` blocks, as Qwen3-Coder writes."""
    parameters = [
        p.literal("<parameter=")
        + p.arg_name(p.literal(name))
        + p.literal(">")
        + p.commit()
        + p.arg_string_value(p.until("</parameter>"), schema)
        + p.literal("</parameter>")
        for name, schema in properties.items()
    ]
    call = p.tool(
        p.literal("<function=")
        + p.tool_name(p.literal("f"))
        + p.literal(">")
        + p.commit()
        + p.zero_or_more(p.choice(*parameters))
        + p.literal("</function>")
    )
    return p.Parser(p.content(p.until("<function=")) + p.zero_or_more(call))


def arguments_of(parser: p.Parser, text: str, partial: bool = False) -> str:
    return to_message(parser.parse(text, partial)).tool_calls[0].arguments


def test_tagged_value_with_integer_schema_becomes_a_number() -> None:
    parser = tagged_parser({"n": {"type": "integer"}})
    assert json.loads(
        arguments_of(parser, "<function=f><parameter=n>5</parameter></function>")
    ) == {"n": 5}


def test_tagged_value_with_string_schema_stays_a_string() -> None:
    parser = tagged_parser({"n": {"type": "string"}})
    assert json.loads(
        arguments_of(parser, "<function=f><parameter=n>5</parameter></function>")
    ) == {"n": "5"}


def test_python_style_booleans_are_booleans_when_the_schema_says_boolean() -> None:
    parser = tagged_parser({"a": {"type": "boolean"}, "b": {"type": "boolean"}})
    text = "<function=f><parameter=a>True</parameter><parameter=b>\nFalse\n</parameter></function>"
    assert json.loads(arguments_of(parser, text)) == {"a": True, "b": False}


def test_tagged_arrays_and_objects_are_decoded_including_python_dicts() -> None:
    parser = tagged_parser({"xs": {"type": "array"}, "o": {"type": "object"}})
    text = (
        "<function=f><parameter=xs>[1, 'a']</parameter>"
        '<parameter=o>{"k": null}</parameter></function>'
    )
    assert json.loads(arguments_of(parser, text)) == {"xs": [1, "a"], "o": {"k": None}}


def test_a_value_that_fits_no_schema_type_is_kept_as_a_string() -> None:
    parser = tagged_parser({"n": {"type": "integer"}})
    assert json.loads(
        arguments_of(parser, "<function=f><parameter=n>five</parameter></function>")
    ) == {"n": "five"}


def test_string_values_are_escaped_into_valid_json() -> None:
    parser = tagged_parser({"s": {"type": "string"}})
    raw = 'line "one"\n\tback\\slash café'
    args = arguments_of(parser, f"<function=f><parameter=s>{raw}</parameter></function>")
    assert json.loads(args) == {"s": raw}


def test_a_call_without_arguments_gets_an_empty_object() -> None:
    parser = tagged_parser({"n": {"type": "integer"}})
    assert arguments_of(parser, "<function=f></function>") == "{}"


def test_partial_tagged_string_value_is_an_unclosed_json_prefix() -> None:
    parser = tagged_parser({"s": {"type": "string"}, "n": {"type": "integer"}})
    args = arguments_of(
        parser, "<function=f><parameter=n>7</parameter><parameter=s>hel", partial=True
    )
    assert args == '{"n": 7, "s": "hel'


def test_partial_typed_value_is_held_back_until_complete() -> None:
    parser = tagged_parser({"n": {"type": "integer"}})
    assert arguments_of(parser, "<function=f><parameter=n>12", partial=True) == '{"n": '


def test_python_dict_arguments_are_normalized_to_json() -> None:
    call = p.tool(
        p.tool_name(p.literal("f")) + p.literal(":") + p.tool_args(p.json_value(python=True))
    )
    message = to_message(p.Parser(call).parse("f:{'a': 'it\\'s', 'b': True}"))
    assert json.loads(message.tool_calls[0].arguments) == {"a": "it's", "b": True}


def test_json_arguments_are_passed_through_verbatim() -> None:
    call = p.tool(p.tool_name(p.literal("f")) + p.literal(":") + p.tool_args(p.json_value()))
    message = to_message(p.Parser(call).parse('f:{"b": 2,  "a": [1]}'))
    assert message.tool_calls[0].arguments == '{"b": 2,  "a": [1]}'


def test_quoted_names_and_ids_are_decoded() -> None:
    call = p.tool(
        p.literal('{"id": ')
        + p.call_id(p.json_string())
        + p.literal(', "name": ')
        + p.tool_name(p.json_string())
        + p.literal("}")
    )
    message = to_message(p.Parser(call).parse('{"id": "call_\\u0031", "name": "get"}'))
    assert (message.tool_calls[0].id, message.tool_calls[0].name) == ("call_1", "get")


def test_reasoning_content_and_calls_land_in_their_fields() -> None:
    grammar = (
        p.literal("<think>")
        + p.reasoning(p.until("</think>"))
        + p.literal("</think>")
        + p.content(p.until("<call>"))
        + p.zero_or_more(
            p.tool(p.literal("<call>") + p.tool_name(p.literal("f")) + p.tool_args(p.json_value()))
        )
    )
    message = to_message(p.Parser(grammar).parse('<think>hmm</think>Hi<call>f{"x": 1}<call>f{}'))
    assert message == Message(
        content="Hi",
        reasoning_content="hmm",
        tool_calls=(ToolCall("f", '{"x": 1}'), ToolCall("f", "{}")),
    )


def test_message_to_dict_has_the_openai_shape() -> None:
    message = Message(content="", tool_calls=(ToolCall("f", '{"a": 1}', "call_1"),))
    assert message.to_dict() == {
        "role": "assistant",
        "content": "",
        "reasoning_content": "",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
        ],
    }


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("42", {"type": "integer"}, "42"),
        ("007", {"type": "integer"}, '"007"'),
        ("-1.5e3", {"type": "number"}, "-1.5e3"),
        ("null", {"type": ["integer", "null"]}, "null"),
        ("3", {"type": ["string", "integer"]}, '"3"'),
        ("3", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "3"),
        (" x ", None, '" x "'),
    ],
)
def test_type_tagged_value(text: str, schema: dict[str, Any] | None, expected: str) -> None:
    assert type_tagged_value(text, ValueType.of(schema).types) == expected


def test_arguments_written_as_a_json_string_are_unwrapped() -> None:
    call = p.tool(p.tool_name(p.literal("f")) + p.literal(":") + p.tool_args(p.json_string()))
    message = to_message(p.Parser(call).parse('f:"{\\"a\\": 1}"'))
    assert message.tool_calls[0].arguments == '{"a": 1}'


def test_json_object_helper_composes_a_json_native_call() -> None:
    call = p.tool(
        p.json_object(
            p.json_member("name", p.literal('"') + p.tool_name(p.literal("get")) + p.literal('"')),
            p.json_member("arguments", p.tool_args(p.json_value())),
        )
    )
    message = to_message(p.Parser(call).parse('{ "name" : "get",\n "arguments": {"x": [1]} }'))
    assert message.tool_calls == (ToolCall("get", '{"x": [1]}'),)


def test_json_key_in_python_flavour_accepts_single_quotes() -> None:
    member = p.json_member("arguments", p.tool_args(p.json_value(python=True)), python=True)
    message = to_message(
        p.Parser(p.tool(p.tool_name(p.literal("f")) + member)).parse("f'arguments': {'a': 1}")
    )
    assert json.loads(message.tool_calls[0].arguments) == {"a": 1}


def calls_between_text_parser() -> p.Parser:
    """Text and `<call>f{...}</call>` calls, alternating."""
    call = p.tool(p.literal("<call>") + p.tool_name(p.literal("f")) + p.tool_args(p.json_value())
                  + p.literal("</call>"))
    text = p.content(p.until("<call>"))
    return p.Parser(text + p.zero_or_more(call + text))


@pytest.mark.parametrize(
    ("output", "content"),
    [
        ('Hi<call>f{}</call>Done', "Hi\nDone"),
        ('Hi <call>f{}</call>Done', "Hi Done"),
        ('Hi<call>f{}</call>\n\nDone', "Hi\n\nDone"),
        ('<call>f{}</call>Done', "Done"),
        ('A<call>f{}</call>B<call>f{}</call>C', "A\nB\nC"),
        ('A<call>f{}</call><call>f{}</call>C', "A\nC"),
        ('A<call>f{}</call>\n \n<call>f{}</call> C', "A C"),  # between calls: no content
        ('Hi <call>f{}</call>\n', "Hi "),  # after the last call: nothing to separate
        ('<call>f{}</call>\n\n', ""),
    ],
)
def test_text_on_both_sides_of_a_call_is_kept_apart(output: str, content: str) -> None:
    message = to_message(calls_between_text_parser().parse(output))
    assert (message.content, len(message.tool_calls)) == (content, output.count("<call>"))


@pytest.mark.parametrize("quoted", ['"call_0001"', '""', '"caf\u00e9 \u65e5\u672c"', '"a\\"b"',
                                    '"\\u00e9"', '"back\\\\slash"', '"tab\\t"', '"\\/"'])
def test_a_quoted_id_or_name_is_its_json_string_value(quoted: str) -> None:
    # Without escapes the value is the text between the quotes (no json.loads per call).
    assert string_value(quoted) == json.loads(quoted)


def builder_in_a_value(named: bool, schema: dict[str, Any] | None) -> MessageBuilder:
    """A stream's builder that has begun the text of argument `a` (of call `f` when named)."""
    builder = MessageBuilder(record=True)
    if named:
        builder.apply((Role.TOOL_NAME, 0, 1, 0, None), "f")
    builder.apply((Role.ARG_NAME, 0, 1, 0, None), "a")
    builder.apply((Role.ARG_STRING_VALUE, 0, 2, PARTIAL, ValueType.of(schema)), "ab")
    return builder


def test_a_values_text_sent_as_it_comes_is_left_to_the_stream() -> None:
    # TextSink: the call's pieces, its index, escaped: no function (the stream does its work).
    builder = builder_in_a_value(named=True, schema=None)
    sink = builder.text_sink(Role.ARG_STRING_VALUE, CONTINUED | PARTIAL, ValueType.of(None))
    assert sink == (None, builder.calls[0].args, 0, True)


def test_a_values_text_before_its_call_is_announced_is_kept_unsent_and_escaped() -> None:
    builder = builder_in_a_value(named=False, schema=None)
    sink = builder.text_sink(Role.ARG_STRING_VALUE, CONTINUED | PARTIAL, None)
    assert sink is not None and sink[1] is None and sink[0] is not None
    assert sink[0]('c"\n') is None
    assert builder.calls[0].args[-1] == 'c\\"\\n'
    builder.apply((Role.TOOL_NAME, 0, 1, 0, None), "f")
    assert json.loads(builder.message().tool_calls[0].arguments + '"}') == {"a": 'abc"\n'}


def test_a_typed_values_text_is_held_in_its_calls_buffer() -> None:
    builder = builder_in_a_value(named=True, schema={"type": "integer"})
    sink = builder.text_sink(Role.ARG_STRING_VALUE, CONTINUED | PARTIAL,
                             ValueType.of({"type": "integer"}))
    assert sink is not None and sink[1] is None
    assert sink[0] is not None and sink[0]("3") is None
    assert builder.calls[0].buffered == ["ab", "3"]
