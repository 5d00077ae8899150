"""The PEG engine's combinators and leaves on complete input."""

from __future__ import annotations

import pytest

from analyzer import peg as p
from analyzer.peg import PegParseError, Role
from analyzer.peg.expressions import Sequence
from analyzer.peg.parser import run
from analyzer.peg.scanning import Literal, Space, Token
from analyzer.peg.state import NEED, MatchState


def roles_and_texts(parser: p.Parser, text: str, partial: bool = False) -> list[tuple[str, str]]:
    return [(c.role.value, c.text) for c in parser.parse(text, partial).captures]


def test_sequence_matches_items_in_order_and_captures_each() -> None:
    parser = p.Parser(p.reasoning(p.literal("ab")) + p.content(p.literal("cd")))
    assert roles_and_texts(parser, "abcd") == [("reasoning", "ab"), ("content", "cd")]


def test_choice_takes_first_alternative_that_matches() -> None:
    parser = p.Parser(
        p.choice(p.content(p.literal("a") + p.literal("x")), p.content(p.literal("ab")))
    )
    assert roles_and_texts(parser, "ab") == [("content", "ab")]


def test_choice_drops_captures_of_failed_alternative() -> None:
    first = p.tool_name(p.literal("a")) + p.literal("x")
    second = p.content(p.literal("ab"))
    parser = p.Parser(p.choice(first, second))
    assert [c.role for c in parser.parse("ab").captures] == [Role.CONTENT]


def test_optional_matches_nothing_when_item_fails() -> None:
    parser = p.Parser(p.optional(p.literal("<think>")) + p.content(p.rest()))
    assert roles_and_texts(parser, "hello") == [("content", "hello")]


def test_repeat_respects_least_and_most() -> None:
    item = p.content(p.literal("a"))
    assert len(p.Parser(p.repeat(item, 2, 3)).parse("aaa").captures) == 3
    with pytest.raises(PegParseError):
        p.Parser(p.repeat(item, 2, 3)).parse("a")
    with pytest.raises(PegParseError):
        p.Parser(p.repeat(item, 2, 3)).parse("aaaa")


def test_until_stops_before_the_earliest_of_several_markers() -> None:
    parser = p.Parser(p.content(p.until("<b>", "<a>")) + p.rest())
    assert roles_and_texts(parser, "xy<a>z<b>") == [("content", "xy")]


def test_until_without_marker_runs_to_the_end_on_complete_input() -> None:
    parser = p.Parser(p.content(p.until("<tool_call>")))
    assert roles_and_texts(parser, "just text") == [("content", "just text")]


def test_until_with_only_empty_markers_is_rest() -> None:
    assert p.until("", "").describe() == "rest"


def test_empty_literal_is_epsilon_so_empty_markers_compose() -> None:
    parser = p.Parser(p.literal("") + p.content(p.rest()) + p.literal(""))
    assert roles_and_texts(parser, "x") == [("content", "x")]


def test_space_skips_spaces_tabs_and_newlines() -> None:
    parser = p.Parser(p.literal("a") + p.space() + p.content(p.literal("b")))
    assert roles_and_texts(parser, "a \t\r\n b") == [("content", "b")]


def test_peek_and_not_consume_nothing() -> None:
    parser = p.Parser(
        p.peek(p.literal("ab")) + p.not_followed_by(p.literal("b")) + p.content(p.rest())
    )
    assert roles_and_texts(parser, "ab") == [("content", "ab")]
    with pytest.raises(PegParseError):
        p.Parser(p.not_followed_by(p.literal("a")) + p.rest()).parse("ab")


def test_regex_matches_a_token() -> None:
    parser = p.Parser(p.call_id(p.regex(r"[a-zA-Z0-9]{9}")) + p.rest())
    assert roles_and_texts(parser, "abc123XYZ tail")[0] == ("call-id", "abc123XYZ")


def test_commit_turns_a_later_failure_into_an_error_instead_of_backtracking() -> None:
    lenient = p.choice(p.literal("<a>") + p.literal("!"), p.content(p.rest()))
    assert roles_and_texts(p.Parser(lenient), "<a>?") == [("content", "<a>?")]
    strict = p.choice(p.literal("<a>") + p.commit() + p.literal("!"), p.content(p.rest()))
    with pytest.raises(PegParseError, match="expected `!`"):
        p.Parser(strict).parse("<a>?")


def test_commit_inside_a_repetition_item_makes_a_broken_item_an_error() -> None:
    item = p.literal("<") + p.commit() + p.content(p.literal("x")) + p.literal(">")
    parser = p.Parser(p.zero_or_more(item) + p.rest())
    with pytest.raises(PegParseError, match="expected `x`"):
        parser.parse("<x><y>")


def test_tool_capture_brackets_its_captures_with_open_and_close() -> None:
    parser = p.Parser(p.tool(p.tool_name(p.literal("f")) + p.tool_args(p.json_value())))
    assert [c.role for c in parser.parse('f{"a": 1}').captures] == [
        Role.TOOL_OPEN,
        Role.TOOL_NAME,
        Role.TOOL_ARGS,
        Role.TOOL_CLOSE,
    ]


def test_choice_skips_alternatives_by_literal_prefix_without_changing_results() -> None:
    alternatives = [p.literal(f"<{n}>") + p.tool_name(p.literal(n)) for n in ("ab", "a", "abc")]
    parser = p.Parser(p.zero_or_more(p.choice(*alternatives)))
    names = [c.text for c in parser.parse("<a>a<abc>abc<ab>ab").captures]
    assert names == ["a", "abc", "ab"]


def test_literals_tries_longest_first_so_prefixes_do_not_shadow() -> None:
    parser = p.Parser(p.tool_name(p.literals(["get", "get_weather"])) + p.rest())
    assert parser.parse("get_weather").captures[0].text == "get_weather"


def test_dump_lists_named_rules_in_readable_peg() -> None:
    call = p.rule("tool-call", p.literal("<tool_call>") + p.tool_args(p.json_value()))
    parser = p.Parser(p.content(p.until("<tool_call>")) + p.zero_or_more(call + p.space()))
    assert parser.dump().splitlines() == [
        'root <- content<until("<tool_call>")> (tool-call space)*',
        'tool-call <- "<tool_call>" tool-args<json-value>',
    ]


def test_dump_shows_choice_optional_and_bounded_repeat() -> None:
    grammar = p.optional(p.literal("a") | p.literal("b")) + p.repeat(p.literal("c"), 1, 2)
    assert p.Parser(grammar).dump() == 'root <- ("a" | "b")? "c"{1,2}'


def test_dump_quotes_literals_with_double_quotes_in_single_quotes() -> None:
    assert p.Parser(p.json_key("name")).dump() == """root <- '"name"' space ":" space"""


def test_a_run_that_matches_records_no_failures() -> None:
    parser = p.Parser(p.choice(p.literal("a"), p.literal("b")) + p.literal("c"))
    result = run(parser.start, "bc", 0, partial=False)
    assert result.outcome == 2
    assert result.state.expected == []  # failures are recorded only for a trace


def test_a_failing_run_still_lists_every_alternative_it_expected() -> None:
    parser = p.Parser(p.choice(p.literal("a"), p.literal("b"), p.literal("cd")))
    with pytest.raises(PegParseError) as error:
        parser.parse("cx")
    assert set(error.value.expected) == {"`a`", "`b`", "`cd`"}
    assert error.value.offset == 0


def spaced_items() -> list[p.Expr]:
    return [Space(), Literal(":"), Space()]


@pytest.mark.parametrize("text", ["", " ", "  :", " : ", ":", ": x", " ;", "\n:\t"])
@pytest.mark.parametrize("partial", [True, False])
def test_a_literal_with_the_space_around_it_is_one_token_that_ends_like_its_items(
    text: str, partial: bool
) -> None:
    fused = p.sequence(*spaced_items())
    assert isinstance(fused, Token)
    assert fused.describe() == 'space ":" space'
    apart = Sequence(tuple(spaced_items()))
    outcomes = []
    for expr in (fused, apart):
        st = MatchState(text, partial)
        outcome = expr.match(st, 0)
        resumed_from = (st.resume_pos, st.need_end) if outcome == NEED else None
        outcomes.append((outcome, resumed_from, st.fail_pos, st.expected))
    assert outcomes[0] == outcomes[1]


class CountedLiteral(Literal):
    """A literal that counts how often it is matched."""

    calls = 0

    def match(self, st: MatchState, pos: int) -> int:
        self.calls += 1
        return super().match(st, pos)

    def opening_chars(self) -> frozenset[str] | None:
        return None  # unknown: a whole parse cannot rule its choice out, and runs it


def test_a_choice_runs_the_leaf_its_alternatives_share_once_where_it_fails() -> None:
    key = CountedLiteral("k")
    both = p.choice(p.noted(key + p.literal("!"), "k", "accepted", "`k!`"), key + p.literal("?"))
    parser = p.Parser(p.optional(both) + p.literal("x"))
    parser.parse("x")
    assert key.calls == 1
    assert parser.parse("k?x").complete  # and where it matches, the choice still does


def test_a_whole_parse_skips_only_what_fails_cleanly() -> None:
    class Counted(Literal):  # keeps Literal's opening characters
        calls = 0

        def match(self, st: MatchState, pos: int) -> int:
            self.calls += 1
            return super().match(st, pos)

    bang = Counted("!")
    parser = p.Parser(p.literal("b") + p.optional(p.space() + bang) + p.literal("c"))
    assert parser.parse("bc").complete
    assert bang.calls == 0  # before `c` the optional is not run
    with pytest.raises(PegParseError, match="expected `!` or `c`"):
        parser.parse("b")  # at the end neither: the trace still lists what it expected
    # An alternative that commits before it consumes is run (its failure is an error).
    committed = p.choice(p.commit() + p.literal("a"), p.literal("b"))
    assert committed.opening_chars() is None
    with pytest.raises(PegParseError):
        p.Parser(committed).parse("b")
    assert (p.space() + p.literal("a")).opening_chars() == frozenset(" \t\r\na")
    assert not (p.space() + p.literal("a")).matches_at_end()
    assert (p.literal("a") + p.commit()).opening_chars() == frozenset("a")
