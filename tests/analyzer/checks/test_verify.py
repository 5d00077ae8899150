"""Round-trip self-verification (analyzer/checks/verify.py) on the format templates and the corpus.

Expected outputs below were read off the templates in templates_corpus/formats/ by hand.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from analyzer import analyze, load_template_file
from analyzer.analysis.pipeline import compiled
from analyzer.checks.verify import (
    CONTENT,
    REASONING,
    Case,
    Outcome,
    Subject,
    Verification,
    cut_turn_end,
    generated_start,
    message_differences,
    render_case,
    request_grammar,
    required_kwargs,
    trigger_start,
    unescaped_strings,
    verification_cases,
    verification_to_json,
    verify_template,
)
from analyzer.gbnf import GrammarResult, Trigger, TriggerKind
from analyzer.model import Analysis, ContentMode, ToolFormat
from analyzer.parsing.message import Message, ToolCall
from analyzer.render.loading import TemplateSource, load_template_text

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"


@cache
def source(name: str) -> TemplateSource:
    return load_template_file(FORMATS / f"{name}.jinja")


@cache
def verified(name: str) -> Verification:
    return verify_template(source(name))


def case(verification: Verification, name: str):  # type: ignore[no-untyped-def]
    found = [c for c in verification.cases if c.case == name]
    assert found, f"no case {name!r} in {[c.case for c in verification.cases]}"
    return found[0]


# --- which cases apply -----------------------------------------------------------------------


def test_a_plain_template_gets_only_the_content_case() -> None:
    cases = verification_cases(analyze(source("plain")))
    assert [c.name for c in cases] == ["content"]


def test_a_tools_only_reasoning_template_checks_reasoning_next_to_a_call_only() -> None:
    names = [c.name for c in verification_cases(analyze(source("think_tools_only")))]
    assert "reasoning" not in names
    assert "reasoning-call" in names


def test_a_template_that_renders_ids_gets_a_case_that_checks_them() -> None:
    cases = {c.name: c for c in verification_cases(analyze(source("tools_id_after")))}
    assert cases["call-id"].check_ids
    assert not cases["call"].check_ids


def test_argument_cases_cover_every_json_type() -> None:
    cases = {c.name: c for c in verification_cases(analyze(source("tools_tagged")))}
    values = [
        v
        for name in ("call-strings", "call-quotes", "call-scalars", "call-nested")
        for v in json.loads(cases[name].message.tool_calls[0].arguments).values()
    ]
    kinds = {type(v).__name__ for v in values}
    assert kinds == {"str", "int", "float", "bool", "NoneType", "dict", "list"}
    text = "".join(v for v in values if isinstance(v, str))
    assert all(part in text for part in ('"', "'", "\n", "<b>", "東京"))


# --- round trips on the format templates -----------------------------------------------------


def test_plain_content_is_cut_from_the_render_without_the_turn_end() -> None:
    content = case(verified("plain"), "content")
    assert content.output == CONTENT  # "<|assistant|>" is the prompt, "<|end|>\n" the turn end
    assert content.outcome == Outcome.PASS
    assert content.actual is not None and content.actual.content == CONTENT


def test_tag_based_reasoning_round_trips_with_its_tags_in_the_output() -> None:
    reasoning = case(verified("think_tag_based"), "reasoning")
    assert reasoning.output == f"<think>{REASONING}</think>\n{CONTENT}"
    assert reasoning.outcome == Outcome.PASS
    assert reasoning.actual is not None
    assert reasoning.actual.reasoning_content == REASONING


def test_forced_open_reasoning_starts_inside_the_block_the_prompt_opened() -> None:
    reasoning = case(verified("think_forced_open"), "reasoning")
    assert reasoning.enable_thinking is True
    assert reasoning.output == f"{REASONING}\n</think>\n{CONTENT}"
    assert reasoning.outcome == Outcome.PASS


def test_wrapped_content_round_trips_without_its_wrapper() -> None:
    content = case(verified("content_wrapped"), "content")
    assert content.output == f"<response>{CONTENT}</response>"
    assert content.actual is not None and content.actual.content.strip() == CONTENT


def test_ids_after_the_arguments_come_back() -> None:
    call_id = case(verified("tools_id_after"), "call-id")
    assert call_id.output == (
        '<call>get_weather<args>{"location": "Paris"}</args><id>a1B2c3D4e</id></call>'
    )
    assert call_id.outcome == Outcome.PASS
    assert call_id.actual is not None and call_id.actual.tool_calls[0].id == "a1B2c3D4e"


def format_names() -> list[str]:
    return sorted(p.stem for p in FORMATS.glob("*.jinja"))


@pytest.mark.parametrize("name", format_names())
def test_every_format_template_round_trips_and_its_grammar_agrees(name: str) -> None:
    verification = verified(name)
    described = [(c.case, c.differences, c.grammar.detail) for c in verification.failures]
    assert verification.round_trip == Outcome.PASS, described
    assert verification.grammar != Outcome.FAIL, described


def test_a_tool_template_is_verified_case_by_case_with_its_grammar() -> None:
    verification = verified("tools_tagged")
    assert [c.case for c in verification.cases] == [
        "content",
        "call",
        "call-strings",
        "call-quotes",
        "call-scalars",
        "call-nested",
        "parallel-calls",
    ]
    assert {c.grammar.mode for c in verification.cases} == {"auto", "required"}


# --- failures are reported with their differences --------------------------------------------


def unwrapped(analysis: Analysis) -> Analysis:
    """The analysis of content_wrapped with the content markers forgotten."""
    content = dataclasses.replace(analysis.content, mode=ContentMode.PLAIN, start="", end="")
    return dataclasses.replace(analysis, content=content)


def test_a_parser_that_keeps_the_wrapper_fails_with_the_difference() -> None:
    broken = unwrapped(analyze(source("content_wrapped")))
    verification = verify_template(source("content_wrapped"), analysis=broken)
    content = case(verification, "content")
    assert verification.round_trip == Outcome.FAIL
    assert content.outcome == Outcome.FAIL
    assert content.differences == (
        f"content: expected {CONTENT!r}, actual {'<response>' + CONTENT!r}",
    )


def test_a_wrong_function_marker_fails_both_the_parse_and_the_grammar() -> None:
    analysis = analyze(source("tools_tag_json"))
    function = dataclasses.replace(analysis.tools.function, name_prefix="<fn name=")
    broken = dataclasses.replace(
        analysis, tools=dataclasses.replace(analysis.tools, function=function)
    )
    verification = verify_template(source("tools_tag_json"), analysis=broken)
    call = case(verification, "call")
    assert call.outcome == Outcome.FAIL
    assert any(d.startswith("content: expected ''") for d in call.differences)
    assert call.grammar.outcome == Outcome.FAIL
    assert call.grammar.detail.startswith("rejected at offset")
    assert verification.grammar == Outcome.FAIL


def test_a_template_that_prefixes_content_fails_the_round_trip() -> None:
    text = (
        '{% for m in messages %}<|{{ m.role }}|>{% if m.role == "assistant" %}Note: '
        "{% endif %}{{ m.content }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    content = case(verify_template(load_template_text(text)), "content")
    assert content.outcome == Outcome.FAIL
    assert content.differences == (f"content: expected {CONTENT!r}, actual {'Note: ' + CONTENT!r}",)


def test_a_template_that_drops_reasoning_skips_the_case_with_the_reason() -> None:
    text = (
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    analysis = analyze(load_template_text(text))
    chat = compiled(text, "", "")
    subject = Subject(analysis, chat, required_kwargs(chat, analysis))
    # The analysis finds no reasoning, so verify_template would not ask; ask directly.
    reasoning = Case("reasoning", Message(content=CONTENT, reasoning_content=REASONING))
    assert render_case(subject, reasoning) == (
        "enable_thinking=None: the template does not show the reasoning; "
        "enable_thinking=None, no tools: the template does not show the reasoning"
    )


# --- pieces ----------------------------------------------------------------------------------


def test_cut_turn_end_drops_the_closing_text_and_unknown_end_tokens() -> None:
    output = "<tool_call>{}</tool_call><|eom|>\n"
    assert (
        cut_turn_end(output, "<|eot|>\n", ("<tool_call>", "</tool_call>"))
        == "<tool_call>{}</tool_call>"
    )
    assert cut_turn_end("Hi<|end|>\n", "<|end|>\n", ()) == "Hi"


def test_generated_start_takes_an_exact_continuation() -> None:
    analysis = analyze(source("plain"))
    assert generated_start("A<|assistant|>", "A<|assistant|>hi", analysis) == (14, "")


def test_generated_start_skips_an_empty_reasoning_block_the_history_leaves_out() -> None:
    analysis = analyze(source("think_tag_based"))
    at, note = generated_start("U<|assistant|><think></think>", "U<|assistant|>hi", analysis)
    assert at == len("U<|assistant|>")
    assert "empty reasoning block" in note


def test_generated_start_realigns_on_the_assistant_header() -> None:
    analysis = analyze(source("plain"))
    prompt = "U<|end|><|system|>Use tools.<|end|><|assistant|>"
    full = "U<|end|><|assistant|>hi<|end|><|system|>Use tools.<|end|>"
    at, note = generated_start(prompt, full, analysis)
    assert full[at:].startswith("hi")
    assert "before the assistant header '<|assistant|>'" in note


def test_generated_start_refuses_a_render_that_cannot_follow_the_prompt() -> None:
    analysis = analyze(source("plain"))
    found = generated_start("U<|assistant|>Sure:", "U<|bot|>hi", analysis)
    assert found == (
        "the render of the message does not continue the generation prompt "
        "(which ends with '<|assistant|>Sure:')"
    )


def test_trigger_start_finds_words_and_patterns() -> None:
    grammar = GrammarResult(
        "",
        (Trigger(TriggerKind.WORD, "<call>"), Trigger(TriggerKind.PATTERN, r"x(\[TOOL\])")),
        (),
        True,
    )
    assert trigger_start(grammar, "ab<call>") == 2
    assert trigger_start(grammar, "x[TOOL] <call>") == 1
    assert trigger_start(grammar, "plain text") is None


def test_differences_follow_the_upstream_rules() -> None:
    expected = Message(content="Hi", tool_calls=(ToolCall("f", '{"a": 1, "b": [2]}', "id1"),))
    same = Message(content=" Hi\n", tool_calls=(ToolCall("f", '{"b":[2],"a":1}', "id1"),))
    assert message_differences(expected, same) == []
    other = Message(content="Hi", tool_calls=(ToolCall("g", '{"a": 2}', "id2"),))
    assert message_differences(expected, other) == [
        "tool_calls[0].name: expected 'f', actual 'g'",
        "tool_calls[0].id: expected 'id1', actual 'id2'",
        'tool_calls[0].arguments: expected {"a": 1, "b": [2]}, actual {"a": 2}',
    ]
    assert message_differences(expected, Message(content="Hi")) == [
        "tool_calls: expected 1, actual 0 []"
    ]


def test_an_unescaped_string_inside_its_own_quotes_is_named() -> None:
    quoted = Case("q", Message(tool_calls=(ToolCall("f", json.dumps({"s": "it's"})),)))
    assert unescaped_strings(quoted, "f(s='it's')") == (
        "the template writes argument 's' unescaped between ' quotes, so no parser can read it back"
    )
    assert unescaped_strings(quoted, 'f(s="it\'s")') == ""


def test_the_json_is_canonical_and_repeatable() -> None:
    first = verification_to_json(verify_template(source("tools_tag_json")))
    again = verification_to_json(verify_template(source("tools_tag_json")))
    assert first == again
    data = json.loads(first)
    assert list(data) == sorted(data)
    assert data["round_trip"] == "pass"
    assert data["cases"][1]["expected"]["tool_calls"][0]["name"] == "get_weather"


# --- the CLI ---------------------------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "analyzer", "verify", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_prints_one_line_per_case_and_exits_zero_when_all_pass() -> None:
    done = run_cli(str(FORMATS / "tools_tag_json.jinja"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("tools_tag_json.jinja: round trip pass, grammar pass")
    assert any(line.split()[:2] == ["PASS", "parallel-calls"] for line in lines)


def test_cli_exits_one_and_shows_the_difference_when_a_case_fails(tmp_path: Path) -> None:
    template = tmp_path / "prefixed.jinja"
    template.write_text(
        '{% for m in messages %}<|{{ m.role }}|>{% if m.role == "assistant" %}'
        "Note: {% endif %}{{ m.content }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    done = run_cli(str(template))
    assert done.returncode == 1
    assert "FAIL  content" in done.stdout
    assert "actual 'Note: Paris is a fine choice." in done.stdout


def test_cli_json_is_the_canonical_json(tmp_path: Path) -> None:
    done = run_cli("--json", str(FORMATS / "plain.jinja"))
    assert done.returncode == 0
    here = json.loads(verification_to_json(verify_template(source("plain"))))
    printed = json.loads(done.stdout)
    # The version hashes the analyzer's source, which may differ between two processes
    # while the tree is being edited; everything else must be the same bytes.
    assert printed.pop("analyzer_version").startswith("0.")
    here.pop("analyzer_version")
    assert printed == here
    assert done.stdout.startswith('{"analyzer_version":')


def test_cli_says_which_file_it_cannot_read(tmp_path: Path) -> None:
    done = run_cli(str(tmp_path / "missing.jinja"))
    assert done.returncode == 2
    assert "missing.jinja" in done.stderr and "cannot read the file" in done.stderr


# --- the shared corpus -----------------------------------------------------------------------

def corpus_names() -> list[object]:
    # Every tool-capable corpus template verifies: no known failures are listed here.
    if not CORPUS.is_dir():
        reason = f"shared corpus not found at {CORPUS}"
        return [pytest.param("", marks=pytest.mark.skip(reason=reason), id="no-shared-corpus")]
    return sorted(p.stem for p in CORPUS.glob("*.jinja"))


@cache
def corpus_verification(name: str) -> tuple[Analysis, Verification]:
    loaded = load_template_file(CORPUS / f"{name}.jinja")
    analysis = analyze(loaded)
    return analysis, verify_template(loaded, analysis=analysis)


@pytest.mark.parametrize("name", corpus_names())
def test_every_tool_capable_corpus_template_verifies(name: str) -> None:
    analysis, verification = corpus_verification(name)
    if analysis.tools.format.mode == ToolFormat.NONE:
        pytest.skip("no tool-call format: not a tool-capable template")
    described = [(c.case, c.differences[:2], c.grammar.detail[:200]) for c in verification.failures]
    assert verification.round_trip != Outcome.FAIL, described
    assert verification.grammar != Outcome.FAIL, described


def test_the_corpus_is_present_or_skipped_with_a_reason() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    assert len(corpus_names()) >= 60


@pytest.mark.parametrize("name", corpus_names())
def test_the_templates_own_renderings_read_without_deviations(name: str) -> None:
    _, verification = corpus_verification(name)
    deviating = [(c.case, d) for c in verification.cases for d in c.differences
                 if d.startswith("deviation on the template's own rendering")]
    assert deviating == []


def test_templates_that_differ_only_in_a_comment_share_their_request_grammars() -> None:
    text = source("tools_tagged").source
    first = analyze(load_template_text("{# one #}" + text))
    second = analyze(load_template_text("{# two #}" + text))
    assert first.template_sha256 != second.template_sha256
    shape = (False, "required", None, "")
    assert request_grammar(first, *shape) is request_grammar(second, *shape)
