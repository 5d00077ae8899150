"""A whole parse that records no failures reads an argument's value in the regex of its lead
where it can (`LeadRun.whole_regex`: a value's text up to its closing tag, the closing, a
quoted dialect's value, each alternative of the value's choice where the ones before it cannot
open, the argument a dispatch picks); where that regex reads only the lead, the value's items
run one by one, as before. A
traced run takes no shortcut: both must end alike and record the same events, on every
template's rendering of a call, with its values edited the ways values and models vary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rendered_calls import (
    expressions_in,
    generated_call,
    generated_call_or_skip,
    template_paths,
    whole_outcome,
)

from analyzer import peg as p
from analyzer.generator.build import (
    Closing,
    Dispatch,
    LeadPattern,
    LeadRun,
    lead_run,
    one_of_leading,
    or_else,
)
from analyzer.generator.dialect import DialectValue, QuotedDialect
from analyzer.generator.value_ends import Intruders, ValueText, tolerant_closing
from analyzer.generator.values import PaddedLiteral, TolerantClosing
from analyzer.peg import Expr
from analyzer.peg.expressions import Sequence
from analyzer.peg.roles import Role
from analyzer.peg.state import FAIL, MatchState

# What the rendered values ("hotels", "Paris") become: text with the lead character of a tag,
# tags, padding, nothing, a quote marker, dialect values deeper than its regex, scalars.
VALUES = (
    "Pa<ris", "<b>Paris</b>", "Paris\n", "\nParis\n", "", " Paris ", "Paris<", "<",
    'Pa<|"|>ris', "Paris</parameter>", "a\n\n", "Paris<|tool_call>x",
)
# What a quoted dialect's string value (`<|"|>Paris<|"|>`) becomes: other values of the
# dialect, spaced, nested past the regex, broken.
DIALECT = (
    "5", " 5", "5 ", "[1,{a:[<|\"|>x<|\"|>]}]", "{a:{b:{c:{d:1}}}}", "[[[[1]]]]", "[1 2]",
    "<abc", "True", " <|\"|>Paris<|\"|>", "\n<|\"|>Pa<ris<|\"|>", "{a:<|\"|>x<|\"|>,a:2}",
    "[<|\"|>a<|\"|>", "{}", "[ ]", "-", "<|\"|>x<|\"|>y",
)


def edited(output: str) -> list[str]:
    """The rendering, its values replaced, and cut or edited around them."""
    found = [output, "Sure.\n" + output]
    for old in ("hotels", "Paris"):
        at = output.find(old)
        if at < 0:
            continue
        found += [output[:at] + new + output[at + len(old):] for new in VALUES]
    for old, new in (("city", "cty"), ("city", "query"), ("query", "quer"), (",", " , "),
                     (",", ""), ("city", "city2"), ("query", "q")):
        at = output.rfind(old)
        if at >= 0:
            found.append(output[:at] + new + output[at + len(old):])
    quoted = '<|"|>Paris<|"|>'
    at = output.find(quoted)
    if at >= 0:
        found += [output[:at] + new + output[at + len(quoted):] for new in DIALECT]
    steps = range(1, len(output), max(1, len(output) // 16))
    found += [output[:at] for at in steps]
    found += [output[:at] + output[at + 1:] for at in steps]
    found += [output[:at] + " " + output[at:] for at in steps]
    return found


def general_outcome(start: Expr, text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patched:
        patched.setattr(Closing, "match", lambda self, st, pos: self.choice.match(st, pos))
        return whole_outcome(start, text, True)


def lead_runs(start: Expr) -> list[LeadRun]:
    """Every lead run of a grammar, a dispatch's whole-parse forms included."""
    found: list[LeadRun] = []
    for expr in expressions_in(start):
        forms = list(expr.whole_table.values()) if isinstance(expr, Dispatch) else [expr]
        found += [form for form in forms if isinstance(form, LeadRun)]
    return found


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_values_read_in_a_leads_regex_equal_the_general_path(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser, rendering = generated_call_or_skip(path)
    start = parser.parser.start
    if not any(run.reads_tail for run in lead_runs(start)):
        pytest.skip("no lead run reads its tail")
    for output in edited(rendering):
        text = parser.prompt.tail + output
        assert whole_outcome(start, text, False) == general_outcome(start, text, monkeypatch), \
            output


def test_tagged_and_dialect_templates_read_values_in_the_lead() -> None:
    # Gemma 4 (a quoted string or a dialect value), GLM-4.6 (text up to its closing tag):
    # their arguments' lead runs read the value too.
    paths = {path.stem: path for path in template_paths()}
    if "GLM-4.6" not in paths:
        pytest.skip("the shared corpus is not there")
    for name in ("google-gemma-4-31B-it", "GLM-4.6", "tools_echo"):
        found = generated_call(paths[name])
        assert found is not None, name
        assert any(run.reads_tail for run in lead_runs(found[0].parser.start)), name


def whole(expr: Expr, text: str, traced: bool = False) -> tuple[int, list[object]]:
    st = MatchState(text, partial=False, traced=traced)
    end = expr.match(st, 0)
    return end, (list(st.events) if end != FAIL else [])


def test_a_later_alternative_is_read_only_where_the_earlier_cannot_open() -> None:
    # `a: "x"` or `a: value`: the value's regex is tried only where the string's quote (or
    # whitespace before it) cannot begin; a spaced value runs the items.
    quote = '<|"|>'
    string = p.literal(quote) + p.arg_string_value(p.until(quote)) + p.literal(quote)
    value = p.capture(Role.ARG_JSON_VALUE, DialectValue(QuotedDialect(quote)))
    argument = lead_run(p.arg_name(p.literal("a")) + p.literal(":") + p.commit()
                        + p.choice(p.space() + string, value))
    assert isinstance(argument, LeadRun)
    assert not argument.reads_tail  # until() gives no tail pattern: the lead alone
    run = lead_run(p.arg_name(p.literal("a")) + p.literal(":") + p.commit() + p.choice(
        p.literal(quote) + p.arg_string_value(p.literal("x")) + p.literal(quote), value))
    assert isinstance(run, LeadRun) and run.reads_tail
    for text in ('a:<|"|>x<|"|>', "a:5", "a: 5", 'a:<|"|>y<|"|>', "a:[1,2]", "a:{b:[1]}",
                 "a:<x", "a:", "a:[1 2]", "a:{b:{c:{d:{e:1}}}}", "a:\n[1]"):
        assert whole(run, text) == whole(run.general_form, text, traced=True), text
    # The guard: the value branch is only after a character the string cannot open with.
    assert "(?=[^<])" in run.whole_regex.pattern


def test_a_lead_pattern_reads_tail_leaves_only_in_a_tail() -> None:
    value = p.capture(Role.ARG_JSON_VALUE, DialectValue(QuotedDialect("'")))
    assert LeadPattern().of(value) is None
    found = LeadPattern(tail=True).of(value)
    assert found is not None and not found[1]
    assert re.compile(found[0]).match("[1, 'a']")


TEXTS = ("Paris</v>", "Paris\n</v>", "Paris\n\n</v>", "\n</v>", "</v>", "Pa<ris</v>", "Paris",
         "Paris</f>x</v>", "Paris\n</f>\n</f>", "Paris<x", "Paris\n</v>\n</f>", "a</w></v>",
         "Paris </v>", "\n\n", "Paris\n<p>", "Paris</v", "Paris\n")


@pytest.mark.parametrize("pad", ["", "\n"])
def test_a_value_texts_tail_pattern_ends_where_it_does(pad: str) -> None:
    # Where the regex matches a value's text, ValueText (and its closing) end there too.
    stops = Intruders(("<p>",), ("</f>",), ("</w>",))
    text = ValueText("</v>", pad, stops)
    pattern = text.tail_pattern()
    assert pattern is not None
    closing = TolerantClosing(tolerant_closing("</v>", PaddedLiteral(pad, "</v>")
                                               if pad else p.literal("</v>"), stops), pad, "</v>")
    both = re.compile(f"(?P<text>{pattern}){closing.tail_pattern()}")
    matched = 0
    for value in TEXTS:
        st = MatchState(value, partial=False, traced=False)
        end = text.match(st, 0)
        found = re.compile(pattern).match(value)
        if found is not None:
            matched += 1
            assert found.end() == end, value
        whole_found = both.match(value)
        if whole_found is not None:
            assert whole_found.end("text") == end, value
            assert whole_found.end() == closing.match(st, end), value
    assert matched >= 5


def test_a_value_text_has_no_tail_pattern_where_its_closing_begins_otherwise() -> None:
    stops = Intruders(("<p>",), ("</f>",), ())
    assert ValueText("]]", "", stops).tail_pattern() is None  # leads `<` and `]`
    assert ValueText("</v>", "<", stops).tail_pattern() is None  # the pad holds the lead
    assert ValueText("</v>", "", stops).tail_pattern() is not None


def dispatched(*alternatives: Expr) -> Expr:
    """An argument loop's item: a separator, then one of the arguments or an undeclared one."""
    one = or_else(one_of_leading(list(alternatives)),
                  p.arg_name(p.regex("[a-z]+")) + p.literal(":") + p.regex("[a-z0-9]+"))
    return lead_run(p.space() + p.optional(p.literal(",")) + p.space() + one)


def test_a_dispatch_in_a_tail_reads_the_argument_its_lead_picks() -> None:
    # `ab` and `a` both begin `ab:x`: the dispatch picks `ab`, which fails (its value is a
    # digit) after its commit; the `a` branch would match it. Leads that begin one another
    # leave the dispatch to run.
    value = p.capture(Role.ARG_JSON_VALUE, p.regex("[0-9]"))
    longer = lead_run(p.arg_name(p.literal("ab")) + p.literal(":") + p.commit() + value)
    shorter = lead_run(p.arg_name(p.literal("a")) + p.optional(p.literal("b")) + p.literal(":")
                       + p.commit() + p.capture(Role.ARG_JSON_VALUE, p.regex("[a-z]")))
    item = dispatched(longer, shorter)
    assert isinstance(item, LeadRun) and not item.reads_tail
    for text in (",ab:x", ",ab:1", ", a:x", ",abc:1"):
        assert whole(item, text) == whole(item.general_form, text, traced=True), text
    apart = dispatched(lead_run(p.arg_name(p.literal("b")) + p.literal(":") + p.commit() + value),
                       shorter)
    assert isinstance(apart, LeadRun) and apart.reads_tail
    for text in (",b:1", ",b:x", ", a:x", ",ab:x", ",c:z", ",b:", ""):
        assert whole(apart, text) == whole(apart.general_form, text, traced=True), text
    # The branch's commit counts: what fails after it fails the optional around it (an
    # undeclared argument commits nothing: the optional backs out).
    held = p.optional(apart + p.literal("!"))
    for text in (",b:1?", ",b:1!", ",c:z?"):
        assert whole(held, text) == whole(held, text, traced=True), text


def test_a_dispatch_in_a_tail_needs_the_same_commits_in_every_branch() -> None:
    value = p.capture(Role.ARG_JSON_VALUE, p.regex("[0-9]"))
    committed = lead_run(p.arg_name(p.literal("b")) + p.literal(":") + p.commit() + value)
    uncommitted = p.arg_name(p.literal("c")) + p.literal(":") + value
    item = dispatched(committed, uncommitted)
    assert isinstance(item, LeadRun) and not item.reads_tail


def test_marks_outside_an_alternation_are_kept() -> None:
    # A rest that is one item holding a capture and then a choice: the choice's branch is
    # the match's last group, but the capture before it records too.
    choice = p.choice(p.literal("<") + p.capture(Role.ARG_STRING_VALUE, p.literal("x")),
                      p.capture(Role.ARG_JSON_VALUE, p.regex("[0-9]")))
    inner = Sequence((p.capture(Role.ARG_NAME, p.literal("k")), choice))
    run = LeadRun(Sequence((p.literal("a"), p.literal(":"), inner)), 2)
    assert run.reads_tail
    for text in ("a:k<x", "a:k1", "a:k", "a:kx", "a:k<1"):
        assert whole(run, text) == whole(run.general_form, text, traced=True), text
    # The rest one choice: its branches' own marks, and nothing else.
    alone = LeadRun(Sequence((p.literal("a"), p.literal(":"), choice)), 2)
    assert alone.tail_branches
    for text in ("a:<x", "a:1", "a:", "a:x", "a:<1"):
        assert whole(alone, text) == whole(alone.general_form, text, traced=True), text


def test_a_dispatch_by_beginnings_is_left_to_run() -> None:
    # Its texts are beginnings an alternative may or may not begin with, not a literal
    # every match of it begins with: a branch per text would not say which it picks.
    def call(name: str) -> Expr:
        return (p.choice(p.literal("f."), p.eps()) + p.tool_name(p.literal(name))
                + p.literal(":") + p.commit() + p.capture(Role.ARG_JSON_VALUE, p.regex("[0-9]")))
    dispatch = one_of_leading([call("a"), call("b")])
    assert type(dispatch).__name__ == "DispatchByBeginnings"
    assert LeadPattern(tail=True).of(dispatch, top=True) is None
    assert LeadPattern(tail=True).of(or_else(dispatch, p.literal("z")), top=True) is None
