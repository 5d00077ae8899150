"""The perturbation corpus (analyzer/checks/robustness.py) on the format templates and the corpus.

Every output is the template's own rendering, edited; every expectation is the rendered base
message (what the edit must not change) or, for the perturbations that must stay text, that
text itself.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from analyzer import analyze, load_template_file
from analyzer.analysis.pipeline import compiled
from analyzer.checks.robustness import (
    PERTURBATIONS,
    UNDECLARED_NAME,
    Context,
    Robustness,
    RobustnessCase,
    case_table,
    check_robustness,
    pass_rate,
    rendered_bases,
    robustness_to_json,
)
from analyzer.checks.verify import Outcome, Subject, required_kwargs
from analyzer.model import ToolFormat
from analyzer.parsing.message import Message

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"
TOOL_FORMATS = sorted(p.stem for p in FORMATS.glob("*.jinja")
                      if analyze(load_template_file(p)).tools.format.mode != ToolFormat.NONE)
# The share of corpus cases that passed at the last measurement (README): below it is a
# regression. Raise it as tolerances land.
FLOOR = 0.92
TARGET = 0.99


@cache
def robustness(path: Path) -> Robustness:
    return check_robustness(load_template_file(path))


def case_of(name: str, perturbation: str) -> RobustnessCase:
    found = [c for c in robustness(FORMATS / f"{name}.jinja").cases
             if c.perturbation == perturbation]
    assert len(found) == 1
    return found[0]


def context_of(name: str) -> Context:
    source = load_template_file(FORMATS / f"{name}.jinja")
    analysis = analyze(source)
    chat = compiled(source.source, source.bos_token, source.eos_token, analysis.render_mode)
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    return Context(subject, source, rendered_bases(subject))


def base_output(name: str, base: str) -> str:
    return context_of(name).bases[base].rendered.output


@pytest.mark.parametrize("name", TOOL_FORMATS)
def test_the_exact_rendering_gives_the_message_and_no_deviation(name: str) -> None:
    control = case_of(name, "exact-rendering")
    assert control.outcome == Outcome.PASS, control.differences
    assert control.actual_deviations == ()


@pytest.mark.parametrize("name", TOOL_FORMATS)
def test_a_verdict_is_pass_exactly_when_message_and_deviations_match(name: str) -> None:
    for case in robustness(FORMATS / f"{name}.jinja").checked:
        matches = not case.differences and \
            sorted(case.actual_deviations) == sorted(case.expected_deviations)
        assert (case.outcome == Outcome.PASS) == matches, case


# Perturbations every format template must already read as expected.
HELD = ("repeated-reasoning-start", "unclosed-reasoning", "content-around-reasoning",
        "call-fence", "call-wrapper-tokens", "calls-semicolon-separated",
        "calls-newline-separated", "arguments-key", "trailing-eos", "missing-parameter-close",
        "missing-call-close", "python-spelling", "undeclared-function",
        "tool-syntax-in-closed-reasoning", "no-arguments", "typed-arguments", "tricky-string",
        "content-and-call", "content-before-call", "content-after-call", "compact-markers",
        "spaced-markers", "arguments-json-string", "cut-off-in-call", "reasoning-only",
        "pretty-json-arguments", "json-member-order", "extra-json-member",
        "cut-off-in-second-call", "cut-off-after-number")


@pytest.mark.parametrize("name", TOOL_FORMATS)
def test_the_format_templates_pass_the_tolerances_that_are_in(name: str) -> None:
    failed = [(c.perturbation, c.differences) for c in robustness(FORMATS / f"{name}.jinja").checked
              if c.perturbation in HELD and c.outcome != Outcome.PASS]
    assert failed == []


@pytest.mark.parametrize("name", TOOL_FORMATS)
def test_an_undeclared_function_stays_content(name: str) -> None:
    case = case_of(name, "undeclared-function")
    assert UNDECLARED_NAME in case.output and "get_weather" not in case.output
    assert case.actual is not None and case.actual.tool_calls == ()
    assert case.actual.content.strip() == case.expected.content.strip()
    assert case.expected_deviations == ("unknown_function",)


def test_tool_syntax_inside_closed_reasoning_stays_reasoning() -> None:
    results = corpus_results()
    found = [c for r in results for c in r.checked
             if c.perturbation == "tool-syntax-in-closed-reasoning"]
    assert len(found) >= 10
    for case in found:
        assert case.outcome == Outcome.PASS, case.differences
        assert case.actual is not None and case.actual.tool_calls == ()
        assert "get_weather" in case.actual.reasoning_content


def test_arguments_under_another_key() -> None:
    case = case_of("tools_json_native", "arguments-key")
    base = base_output("tools_json_native", "call")
    assert case.output == base.replace('"arguments"', '"parameters"')
    assert case.expected_deviations == ("arguments_key",)
    assert case.expected.tool_calls[0].name == "get_weather"


def test_a_member_the_template_does_not_write() -> None:
    case = case_of("tools_json_native", "extra-json-member")
    base = base_output("tools_json_native", "call")
    at = base.index('"name"')
    assert case.output == base[:at] + '"type": "function", ' + base[at:]
    assert case.expected_deviations == ("unknown_member",)
    assert case.outcome == Outcome.PASS, case.differences


def test_json_calls_separated_by_a_semicolon_in_one_wrapper() -> None:
    case = case_of("tools_json_native", "calls-semicolon-separated")
    assert case.base == "parallel-calls"
    assert "}; {" in case.output and case.output.count("<tool_call>") == 1
    assert len(case.expected.tool_calls) == 2


def test_a_parameter_closing_tag_left_out() -> None:
    case = case_of("tools_tagged", "missing-parameter-close")
    base = base_output("tools_tagged", "call-two-args")
    assert case.output.count("</parameter>") == base.count("</parameter>") - 1
    assert case.expected_deviations == ("missing_close",)


def test_a_python_call_list_gets_a_json_body_between_its_wrapper_tokens() -> None:
    case = case_of("tools_python_call", "json-body")
    assert case.output == ('<|tool_call_start|>[{"name": "get_weather", "arguments": '
                           '{"location": "Paris"}}]<|tool_call_end|>')


def test_the_namespace_of_an_indexed_call_left_out() -> None:
    case = case_of("tools_indexed", "missing-namespace")
    assert "functions.get_weather" in base_output("tools_indexed", "call")
    assert "functions." not in case.output and "get_weather:" in case.output


def test_a_repeated_reasoning_opener() -> None:
    case = case_of("think_tools_only", "repeated-reasoning-start")
    assert case.output.startswith("<|THINK|>\n<|THINK|>")
    assert case.expected.reasoning_content
    assert case.expected_deviations == ("repeated_reasoning_start",)


def test_the_json_form_lists_every_perturbation() -> None:
    result = robustness(FORMATS / "tools_tagged.jinja")
    text = robustness_to_json(result)
    assert text == robustness_to_json(check_robustness(
        load_template_file(FORMATS / "tools_tagged.jinja")))
    assert [c.perturbation for c in result.cases] == [p.name for p in PERTURBATIONS]


def test_a_template_without_tools_has_only_skipped_cases() -> None:
    result = robustness(FORMATS / "plain.jinja")
    assert result.checked == () and pass_rate([result]) == (0, 0)


def corpus_paths() -> list[Path]:
    shared = sorted(CORPUS.glob("*.jinja")) if CORPUS.is_dir() else []
    return shared + sorted(FORMATS.glob("*.jinja"))


@cache
def corpus_results() -> tuple[Robustness, ...]:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return tuple(robustness(path) for path in corpus_paths())


def format_table(results: tuple[Robustness, ...]) -> str:
    passed, total = pass_rate(results)
    rows = [f"{k.perturbation:32} pass {k.passed:3}  message right {k.message_right:3}  "
            f"fail {k.failed:3}  "
            f"whole-message {k.whole_message_failed:3}  n/a {k.skipped:3}"
            for k in case_table(results)]
    return "\n".join([f"robustness over {len(results)} templates: {passed}/{total} cases pass",
                      *rows])


def test_the_whole_corpus_runs_and_reports_its_rate(capsys: pytest.CaptureFixture[str]) -> None:
    results = corpus_results()
    with capsys.disabled():
        print("\n" + format_table(results))
    controls = [c for r in results for c in r.checked if c.perturbation == "exact-rendering"]
    assert len(controls) >= 50
    assert all(c.outcome == Outcome.PASS for c in controls), [
        c.differences for c in controls if c.outcome != Outcome.PASS]
    passed, total = pass_rate(results)
    assert passed / total >= FLOOR, format_table(results)


def test_the_corpus_meets_the_target() -> None:
    results = corpus_results()
    passed, total = pass_rate(results)
    assert passed / total >= TARGET
    assert sum(r.whole_message_failures for r in results) == 0


def test_every_tool_capable_format_template_renders_its_bases() -> None:
    for name in TOOL_FORMATS:
        context = context_of(name)
        assert context.subject.analysis.tools.format.mode != ToolFormat.NONE
        assert "call" in context.bases, name
        assert context.bases["call"].expected.tool_calls != Message().tool_calls


def test_a_python_call_list_spelled_another_valid_way_is_no_deviation() -> None:
    case = case_of("tools_python_call", "python-spelling")
    assert base_output("tools_python_call", "call-two-args") == \
        "<|tool_call_start|>[search_records(query='hotels', city='Paris')]<|tool_call_end|>"
    assert case.output == \
        '<|tool_call_start|>[search_records(query="hotels",city="Paris")]<|tool_call_end|>'
    assert case.outcome == Outcome.PASS, case.differences


def test_a_json_body_stays_inside_the_templates_own_call_section() -> None:
    results = dict(zip(corpus_paths(), corpus_results(), strict=True))
    found = 0
    for path, result in results.items():
        case = next(c for c in result.cases if c.perturbation == "json-body")
        if case.outcome == Outcome.SKIP:
            continue
        found += 1
        fmt = analyze(load_template_file(path)).tools.format
        section = fmt.section_start.strip().removesuffix("[")
        if section:  # the section's markers, whatever their shape (Kimi-K3's is not one token)
            assert section in case.output, path.stem
            assert fmt.section_end.strip().removeprefix("]") in case.output, path.stem
        assert '"name": "get_weather"' in case.output
    assert found >= 15


def test_content_written_with_a_call_is_rendered_and_read_back() -> None:
    # verify's message forms carry a message's own content with its calls (they sent "").
    results = dict(zip(corpus_paths(), corpus_results(), strict=True))
    found = {p.stem: c for p, r in results.items() for c in r.cases
             if c.perturbation == "content-and-call" and c.outcome != Outcome.SKIP}
    assert len(found) >= 30
    case = found["Qwen-Qwen3-0.6B"]
    assert "</think>\n\nLet me check.\n<tool_call>" in case.output
    assert case.expected.content == "Let me check."
    assert case.outcome == Outcome.PASS, case.differences
    # The format templates render no content with calls: it is written before the call.
    before = case_of("tools_json_native", "content-before-call")
    assert before.output.startswith("Let me check.\n<tool_call>")
    assert before.outcome == Outcome.PASS and before.expected.content == "Let me check."


def test_line_breaks_next_to_markers_left_out() -> None:
    case = case_of("tools_tagged", "compact-markers")
    assert "\n" not in case.output and "<parameter=query>hotels</parameter>" in case.output
    assert case.outcome == Outcome.PASS, case.differences
    # A header's own inner text is the template's literal: kept (GigaChat's role header).
    results = dict(zip(corpus_paths(), corpus_results(), strict=True))
    giga = next(r for p, r in results.items() if p.stem == "GigaChat3-10B-A1.8B")
    compact = next(c for c in giga.cases if c.perturbation == "compact-markers")
    assert "<|message_sep|>\n\nfunction call<|role_sep|>{" in compact.output
    assert compact.outcome == Outcome.PASS, compact.differences


def cut_off_cases() -> dict[str, RobustnessCase]:
    results = dict(zip(corpus_paths(), corpus_results(), strict=True))
    return {path.stem: next(c for c in result.cases if c.perturbation == "cut-off-in-call")
            for path, result in results.items()}


def test_an_output_cut_off_after_a_value_keeps_the_call() -> None:
    cases = {name: c for name, c in cut_off_cases().items() if c.outcome != Outcome.SKIP}
    assert len(cases) >= 60
    assert [(n, c.differences) for n, c in cases.items() if c.outcome != Outcome.PASS] == []
    # A Python call list cut inside a quoted string: the value held until whole is healed.
    python_cut = cases["tools_python_call"]
    assert python_cut.output.endswith("(location='Paris")
    assert python_cut.actual_deviations == ("malformed_call",)
    json_cut = cases["tools_json_native"]
    assert json_cut.output.endswith('"Paris') and json_cut.actual_deviations == ("malformed_call",)
    tagged = cases["tools_tagged"]
    assert tagged.actual is not None and tagged.actual.tool_calls[0].arguments == \
        '{"location": "Paris"}'
    assert tagged.actual_deviations == ("missing_close",) * 3


def test_a_dedicated_handlers_cut_off_call_keeps_its_value() -> None:
    # Muse's ATEM call closes with two tags: cut off, each is noted missing, the value kept
    # (the handler required both tags: the call broke and lost its arguments).
    case = cut_off_cases()["muse-glimmer"]
    assert case.output.endswith('<atem:parameter name="location">Paris')
    assert case.outcome == Outcome.PASS, case.differences
    assert case.actual_deviations == ("missing_close",) * 3


def test_parallel_calls_cut_off_in_the_second_keep_the_first_whole() -> None:
    results = dict(zip(corpus_paths(), corpus_results(), strict=True))
    cases = {p.stem: c for p, r in results.items() for c in r.cases
             if c.perturbation == "cut-off-in-second-call" and c.outcome != Outcome.SKIP}
    assert len(cases) >= 55
    assert [(n, c.differences) for n, c in cases.items() if c.outcome != Outcome.PASS] == []
    # A JSON call object cut inside the second call's first string, where a partial reading
    # has not decided yet that a call begins (the separator pattern before it waits near the
    # end of the text): the output is finished, so the call begun is kept.
    for name in ("content_wrapped", "MiniMax-M1"):
        case = cases[name]
        assert case.output.endswith('"arguments": {"query": "hotels')
        assert case.actual is not None and [c.name for c in case.actual.tool_calls] == [
            "get_weather", "search_records"]
        assert case.actual.tool_calls[1].arguments == '{"query": "hotels"}'
        assert case.actual_deviations == ("malformed_call",)
    python_cut = cases["tools_python_call"]
    assert python_cut.output.endswith("search_records(query='hotels")
    assert python_cut.outcome == Outcome.PASS, python_cut.differences


def test_an_output_cut_off_right_after_a_number_keeps_the_number() -> None:
    # The output is finished: the number at its very end is whole (a partial reading held it
    # back as one that may still grow, and the healed arguments said null).
    results = dict(zip(corpus_paths(), corpus_results(), strict=True))
    cases = {p.stem: c for p, r in results.items() for c in r.cases
             if c.perturbation == "cut-off-after-number" and c.outcome != Outcome.SKIP}
    assert len(cases) >= 55
    assert [(n, c.differences) for n, c in cases.items() if c.outcome != Outcome.PASS] == []
    json_cut = cases["tools_json_native"]
    assert json_cut.output.endswith('"limit": 5')
    assert json_cut.actual is not None and json_cut.actual.tool_calls[1].arguments == \
        '{"query": "hotels", "limit": 5}'
    assert json_cut.actual_deviations == ("malformed_call",)
    # A typed value in a tag named after its parameter (`<limit>5`) reads as a string value
    # does: the closing tags left out are noted, the value typed by its schema.
    echo = cases["tools_echo"]
    assert echo.output.endswith("<limit>5")
    assert echo.actual_deviations == ("missing_close",) * 3
    python_cut = cases["tools_python_call"]
    assert python_cut.output.endswith("limit=5")
    assert python_cut.actual_deviations == ("missing_close",)
