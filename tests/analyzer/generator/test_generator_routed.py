"""Recipient-routed outputs (the grammar under the dedicated handlers) and handler choice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer import peg as p
from analyzer.analysis.pipeline import analyze
from analyzer.generator import generate_parser, parse_output
from analyzer.generator.routed import Destination, Route, Routing, routed_output
from analyzer.handlers import choose_handler
from analyzer.parsing.mapper import to_message
from analyzer.parsing.message import Message
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import StreamParser, accumulate
from analyzer.render.loading import load_template_file

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"


def route(header: str) -> Destination:
    """A toy router: `think` reasons, `say` answers, `call NAME` calls, `tool X` drops, and
    anything else is kept as text."""
    if header == "think":
        return Destination(Route.REASONING)
    if header == "say":
        return Destination(Route.CONTENT)
    if header.startswith("call ") and header[5:] in ("get_weather",):
        return Destination(Route.CALL, header[5:], 5)
    return Destination(Route.DROP if header.startswith("tool ") else Route.TEXT)


def parser(extract_reasoning: bool = True) -> p.Parser:
    routing = Routing(message_start="<s>", header_end=":", terminators=("<e>",), route=route,
                      call_body=lambda name: p.space() + p.tool_args(p.json_value()),
                      extract_reasoning=extract_reasoning)
    return p.Parser(routed_output(routing))


def parse(text: str, extract_reasoning: bool = True, partial: bool = False) -> Message:
    return to_message(parser(extract_reasoning).parse(text, partial))


def test_each_header_sends_its_body_where_it_routes() -> None:
    message = parse('think:plan<e><s>say:Hello<e><s>call get_weather:{"city": "Paris"}<e>')
    assert (message.reasoning_content, message.content) == ("plan", "Hello")
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
        ("get_weather", {"city": "Paris"})]


def test_reasoning_left_in_content_keeps_its_markup() -> None:
    message = parse("think:plan<e><s>say:Hello", extract_reasoning=False)
    assert message.content == "think:plan<e>Hello"


def test_a_message_to_a_dropped_recipient_is_left_out() -> None:
    message = parse("say:Hi<e><s>tool exec:ls<e>")
    assert (message.content, message.tool_calls) == ("Hi", ())


def test_a_message_to_an_unknown_recipient_stays_visible_as_written() -> None:
    message = parse("say:Hi<e><s>call rm_rf:{}<e>")
    assert (message.content, message.tool_calls) == ("Hi<s>call rm_rf:{}<e>", ())


def test_text_without_a_header_is_content() -> None:
    assert parse("just text, no header").content == "just text, no header"


def test_an_unfinished_header_is_held_back() -> None:
    message = parse("say:Hi<e><s>thi", partial=True)
    assert (message.content, message.reasoning_content) == ("Hi", "")


def test_streaming_routed_messages_equals_one_shot() -> None:
    text = 'think:plan<e><s>say:Hello<e><s>call get_weather:{"city": "Paris"}<e>'
    stream = StreamParser(parser())
    deltas = [d for ch in text for d in stream.feed(ch)] + stream.finish()
    assert accumulate(deltas) == parse(text)


def test_format_templates_use_the_generated_parser() -> None:
    assert choose_handler(analyze(load_template_file(FORMATS / "tools_tagged.jinja"))) == "auto"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared corpus templates are not present")
@pytest.mark.parametrize(("template", "handler"), [
    ("openai-gpt-oss-120b.jinja", "gpt-oss-channels"),
    ("meetkai-functionary-medium-v3.2.jinja", "functionary-v3.2-recipients"),
    ("muse-glimmer.jinja", "muse-atem-recipients"),
    ("Qwen3-Coder.jinja", "auto"),
])
def test_dedicated_handlers_are_recognized_from_the_analysis(template: str, handler: str) -> None:
    analysis = analyze(load_template_file(CORPUS / template))
    assert (choose_handler(analysis), analysis.handler) == (handler, handler)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared corpus templates are not present")
def test_a_muse_parameter_the_schema_does_not_declare_stays_in_the_call() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    analysis = analyze(load_template_file(CORPUS / "muse-glimmer.jinja"))
    output = (' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
              '<atem:parameter name="city">Paris</atem:parameter>\n'
              '<atem:parameter name="days">3</atem:parameter>\n'
              '<atem:parameter name="zone">EU west</atem:parameter>\n'
              "</atem:invoke>\n</atem:function_calls>")
    message = parse_output(analysis, ParseOptions.make(tools=tools), output)
    assert message.content == ""
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3, "zone": "EU west"})]


WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared corpus templates are not present")
def test_a_gpt_oss_call_of_an_undeclared_function_is_text_with_a_problem_at_its_name() -> None:
    analysis = analyze(load_template_file(CORPUS / "openai-gpt-oss-120b.jinja"))
    parser = generate_parser(analysis, ParseOptions.make(tools=WEATHER))
    output = ("<|channel|>final<|message|>Hi<|end|><|start|>assistant<|channel|>commentary "
              'to=functions.get_wether <|constrain|>json<|message|>{"city": "Paris"}<|call|>')
    report = parser.parse_report(output)
    assert report.message.content == "Hi" + output[output.index("<|start|>"):]
    assert report.message.tool_calls == ()
    (problem,) = report.problems
    assert (problem.offset, problem.expected) == (output.index("get_wether"), ("`get_weather`",))
    assert problem.kept_offset == output.index("<|start|>")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared corpus templates are not present")
def test_a_functionary_message_to_an_undeclared_recipient_keeps_its_marker() -> None:
    analysis = analyze(load_template_file(CORPUS / "meetkai-functionary-medium-v3.2.jinja"))
    parser = generate_parser(analysis, ParseOptions.make(tools=WEATHER))
    report = parser.parse_report('all\nHi\n>>>get_wether\n{"city": "Paris"}')
    assert report.message.content == 'Hi\n>>>get_wether\n{"city": "Paris"}'
    (problem,) = report.problems
    assert (problem.line, problem.column, problem.found) == (3, 4, "`get_wether`")


@pytest.mark.parametrize("header", ["think", "tool exec", "unknown"])
def test_a_message_body_streams_as_it_comes_whatever_its_route(header: str) -> None:
    stream = StreamParser(parser(extract_reasoning=False))
    stream.feed(header + ":")
    sent = [d for _ in range(300) for d in stream.feed("more words ")]
    assert len(stream.buffer) < 20  # the body is not held back (and re-read) to its end
    if header != "tool exec":  # a dropped message sends nothing, the others their text
        assert "".join(d.content or "" for d in sent).endswith("more words " * 299)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared corpus templates are not present")
def test_a_gpt_oss_recipient_without_its_namespace_is_a_call_noted_at_its_name() -> None:
    analysis = analyze(load_template_file(CORPUS / "openai-gpt-oss-120b.jinja"))
    parser = generate_parser(analysis, ParseOptions.make(tools=WEATHER))
    output = ('<|channel|>commentary to=get_weather <|constrain|>json<|message|>'
              '{"city": "Paris"}<|call|>')
    report = parser.parse_report(output)
    assert [(c.name, json.loads(c.arguments)) for c in report.message.tool_calls] == [
        ("get_weather", {"city": "Paris"})]
    (deviation,) = report.deviations
    assert (deviation.kind, deviation.action) == ("missing_namespace", "accepted")
    assert deviation.offset == output.index("get_weather")
    assert "functions." in deviation.expected


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared corpus templates are not present")
def test_a_gpt_oss_recipient_that_is_no_declared_function_is_still_not_a_call() -> None:
    analysis = analyze(load_template_file(CORPUS / "openai-gpt-oss-120b.jinja"))
    parser = generate_parser(analysis, ParseOptions.make(tools=WEATHER))
    output = ('<|channel|>commentary to=get_wether <|constrain|>json<|message|>'
              '{"city": "Paris"}<|call|>')
    report = parser.parse_report(output)
    assert report.message.tool_calls == ()
    assert "missing_namespace" not in [d.kind for d in report.deviations]


def noted(text: str, eos: tuple[str, ...] = ()) -> tuple[Message, list[str]]:
    routing = Routing(message_start="<s>", header_end=":", terminators=("<e>",), route=route,
                      call_body=lambda name: p.space() + p.tool_args(p.json_value()),
                      eos_texts=eos)
    result = p.Parser(routed_output(routing)).parse(text)
    return to_message(result), [notice.note.kind for notice in result.notices]


def test_reasoning_left_unclosed_before_the_next_message_is_read_and_noted() -> None:
    message, kinds = noted('think:plan<s>call get_weather:{"city": "Paris"}<e>')
    assert message.reasoning_content == "plan" and len(message.tool_calls) == 1
    assert kinds == ["unclosed_reasoning"]
    assert noted("think:still planning")[1] == []  # out of budget: no departure


def test_an_end_of_sequence_text_ending_the_output_is_dropped_and_noted() -> None:
    assert noted("say:Hello<e></s>", eos=("</s>",)) == (Message(content="Hello"), ["trailing_eos"])
    # One of the message terminators, doubled at the end, is no part of the answer either.
    assert noted("say:Hello<e><e>") == (Message(content="Hello"), ["trailing_eos"])
    assert noted("say:Hello<e>", eos=("</s>",)) == (Message(content="Hello"), [])


def test_a_terminator_that_is_the_end_of_sequence_ends_the_output_noted() -> None:
    assert noted("say:Hello<e>", eos=("<e>",)) == (Message(content="Hello"), ["trailing_eos"])
    message, kinds = noted("say:Hello<e><s>say:Bye", eos=("<e>",))
    assert (message.content, kinds) == ("HelloBye", [])


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared corpus templates are not present")
def test_a_muse_parameter_left_unclosed_closes_at_the_next_parameter() -> None:
    properties = {"city": {"type": "string"}, "days": {"type": "integer"}}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": properties}}}]
    analysis = analyze(load_template_file(CORPUS / "muse-glimmer.jinja"))
    output = (' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
              '<atem:parameter name="city">Paris\n'
              '<atem:parameter name="days">3</atem:parameter>\n'
              "</atem:invoke>\n</atem:function_calls>")
    report = generate_parser(analysis, ParseOptions.make(tools=tools)).parse_report(output)
    assert [json.loads(c.arguments) for c in report.message.tool_calls] == [
        {"city": "Paris", "days": 3}]
    assert [(d.kind, d.offset) for d in report.deviations] == [
        ("missing_close", output.index("Paris") + len("Paris"))]
