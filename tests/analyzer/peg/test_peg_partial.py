"""Partial input: what is certain is returned, what is not is held back."""

from __future__ import annotations

import pytest

from analyzer import peg as p
from analyzer.peg import PegParseError, Role
from analyzer.peg.captures import Capture
from analyzer.peg.parser import run
from analyzer.peg.scanning import Literal
from analyzer.peg.state import MatchState


def reasoning_then_tools() -> p.Parser:
    thinking = p.literal("<think>") + p.commit() + p.reasoning(p.until("</think>"))
    call = p.tool(
        p.literal("<tool_call>")
        + p.commit()
        + p.space()
        + p.literal('{"name": "')
        + p.tool_name(p.literals(["get_weather", "search"]))
        + p.literal('", "arguments": ')
        + p.tool_args(p.json_value())
        + p.literal("}")
        + p.space()
        + p.literal("</tool_call>")
    )
    grammar = (
        p.optional(thinking + p.literal("</think>"))
        + p.content(p.until("<tool_call>"))
        + p.zero_or_more(call + p.space())
    )
    return p.Parser(grammar)


def texts(result: p.ParseResult, role: Role) -> str:
    return "".join(c.text for c in result.by_role(role))


@pytest.mark.parametrize("cut", ["<", "<tool", "<tool_", "<tool_call"])
def test_a_trailing_prefix_of_the_tool_marker_never_leaks_into_content(cut: str) -> None:
    result = reasoning_then_tools().parse("Hello " + cut, partial=True)
    assert texts(result, Role.CONTENT) == "Hello "
    assert not result.complete


@pytest.mark.parametrize("cut", ["<", "</", "</thi", "</think"])
def test_a_trailing_prefix_of_the_reasoning_end_is_held_back(cut: str) -> None:
    result = reasoning_then_tools().parse("<think>Let me see" + cut, partial=True)
    assert texts(result, Role.REASONING) == "Let me see"
    assert texts(result, Role.CONTENT) == ""


def test_a_partial_opening_marker_yields_nothing_yet() -> None:
    result = reasoning_then_tools().parse("<thi", partial=True)
    assert result.captures == ()


def test_text_that_only_looks_like_a_marker_start_inside_content_is_kept() -> None:
    result = reasoning_then_tools().parse("a < b and <tool? no", partial=True)
    assert texts(result, Role.CONTENT) == "a < b and <tool? no"


def test_an_unfinished_json_argument_is_reported_as_partial() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Par'
    result = reasoning_then_tools().parse(text, partial=True)
    args = result.by_role(Role.TOOL_ARGS)
    assert [c.partial for c in args] == [True]
    assert args[0].text == '{"location": "Par'
    assert result.by_role(Role.TOOL_NAME)[0].text == "get_weather"
    assert [c.role for c in result.captures].count(Role.TOOL_CLOSE) == 0


def test_a_complete_call_followed_by_a_partial_one_keeps_the_first_whole() -> None:
    first = '<tool_call>{"name": "search", "arguments": {"q": 1}}</tool_call>\n'
    result = reasoning_then_tools().parse(first + '<tool_call>{"name": "get_w', partial=True)
    assert [c.text for c in result.by_role(Role.TOOL_NAME)] == ["search"]
    assert [c.text for c in result.by_role(Role.TOOL_ARGS)] == ['{"q": 1}']


def test_a_number_at_the_end_is_not_final_yet() -> None:
    text = '<tool_call>{"name": "search", "arguments": {"n": 12'
    args = reasoning_then_tools().parse(text, partial=True).by_role(Role.TOOL_ARGS)
    assert "".join(c.text for c in args) == '{"n": 12'
    assert all(c.partial for c in args)


@pytest.mark.parametrize("cut", ["0.", "-1.", "2e", "2.5E", "3e+", "3E-"])
def test_a_number_cut_before_its_fraction_or_exponent_waits(cut: str) -> None:
    # The scanner reads `0` of `0.`: where the text ends after what a number goes on with,
    # the number's end is not known yet (a stream cut there must not break the value).
    parser = p.Parser(p.literal("[") + p.call_id(p.json_value()) + p.literal("]"))
    result = parser.parse("[" + cut, partial=True)
    assert not result.complete and all(c.partial for c in result.by_role(Role.CALL_ID))
    with pytest.raises(PegParseError):
        parser.parse("[" + cut + "]")  # a whole text: the number ends there, malformed
    assert [c.text for c in parser.parse("[" + cut + "5]").by_role(Role.CALL_ID)] == [cut + "5"]


def test_partial_input_that_contradicts_the_grammar_is_an_error() -> None:
    with pytest.raises(PegParseError, match="expected"):
        reasoning_then_tools().parse('<tool_call>{"name": "nope', partial=True)


def test_same_input_parsed_complete_is_not_partial() -> None:
    result = reasoning_then_tools().parse("<think>a</think>b")
    assert result.complete
    assert not any(c.partial for c in result.captures)


def test_content_held_in_an_undecided_choice_is_not_reported_as_certain() -> None:
    # Without a commit, "<a>xy" may still turn out to be plain content: nothing is certain.
    grammar = p.choice(
        p.literal("<a>") + p.reasoning(p.until("</a>")) + p.literal("</a>"), p.content(p.rest())
    )
    result = p.Parser(grammar).parse("<a>xy", partial=True)
    assert result.captures == ()


def test_regex_near_the_end_waits_for_more_input() -> None:
    parser = p.Parser(p.call_id(p.regex(r"[a-z0-9]{9}")) + p.literal("!"))
    assert parser.parse("abc", partial=True).captures == ()


class CountedLiteral(Literal):
    """A literal that counts how often it is matched."""

    calls = 0

    def match(self, st: MatchState, pos: int) -> int:
        self.calls += 1
        return super().match(st, pos)


def test_a_choice_waits_as_itself_while_the_input_ends_inside_every_prefix() -> None:
    first = CountedLiteral("<alpha>")
    parser = p.Parser(p.choice(first, p.literal("<also>")) + p.content(p.rest()))
    waiting = run(parser.start, "<al", 0, partial=True)
    assert waiting.needs_more and waiting.state.resume_pos == 0
    assert first.calls == 0  # no alternative ran: none is decided yet
    assert parser.parse("<also>x").captures[0].text == "x"  # then decided as before


def outcome(parser: p.Parser, text: str, partial: bool) -> object:
    """The events and completeness of a parse, or its error message."""
    try:
        result = parser.parse(text, partial)
    except PegParseError as error:
        return str(error)
    return result.events, result.complete


@pytest.mark.parametrize("partial", [False, True])
@pytest.mark.parametrize("text", ["<a>name</a>", "<a>nam", "<a>", "<a>other</a>", "<a>name",
                                  "<a>namex</a>", "<a></a>", "<a>na</a>"])
def test_a_captured_literal_matches_as_the_general_capture_does(text: str, partial: bool) -> None:
    def grammar(named: p.Expr) -> p.Parser:
        return p.Parser(p.tool(p.literal("<a>") + named + p.literal("</a>"))
                        | p.content(p.until("<a>")))

    fused = p.arg_name(Literal("name"))
    assert type(fused).__name__ == "LiteralCapture"
    general = Capture(Role.ARG_NAME, Literal("name"))
    assert outcome(grammar(fused), text, partial) == outcome(grammar(general), text, partial)
