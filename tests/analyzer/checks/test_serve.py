"""Serve it: a template's analysis matched to vLLM's, SGLang's and llama.cpp's built-in parsers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from analyzer.analysis.pipeline import analyze
from analyzer.checks.engines import Engine, load_engines
from analyzer.checks.serve import EngineAdvice, advise, serve_advice
from analyzer.render.loading import load_template_file

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(),
                                  reason="../shared/corpus/templates is not available")


def advice_for(path: Path) -> dict[str, EngineAdvice]:
    analysis = analyze(load_template_file(path))
    return {a.engine: a for a in serve_advice(analysis, template_path="t.jinja")}


def engine(engine_id: str) -> Engine:
    return next(e for e in load_engines() if e.id == engine_id)


@pytest.mark.parametrize("path", [
    FORMATS / "tools_json_native.jinja",
    pytest.param(CORPUS / "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
                 marks=needs_corpus),
])
def test_hermes_style_json_in_tool_call_maps_to_the_hermes_parsers(path: Path) -> None:
    advice = advice_for(path)
    assert advice["vllm"].tool_parser == "hermes" and advice["sglang"].tool_parser == "hermes"
    assert advice["vllm"].flags == ("--chat-template", "t.jinja", "--enable-auto-tool-choice",
                                    "--tool-call-parser", "hermes")
    assert "--enable-auto-tool-choice" not in advice["sglang"].flags
    assert all(a.ok for a in advice.values())


@pytest.mark.parametrize("path", [
    FORMATS / "tools_tagged.jinja",
    pytest.param(CORPUS / "Qwen3-Coder.jinja", marks=needs_corpus),
])
def test_qwen3_coder_xml_calls_map_to_qwen3_coder(path: Path) -> None:
    advice = advice_for(path)
    assert advice["vllm"].tool_parser == "qwen3_coder"
    assert advice["sglang"].tool_parser == "qwen3_coder"
    assert "hermes" not in advice["vllm"].other_tool_parsers


def test_a_format_no_engine_has_says_so_and_what_breaks() -> None:
    advice = advice_for(FORMATS / "tools_markdown.jinja")
    for engine_id in ("vllm", "sglang"):
        assert not advice[engine_id].ok and advice[engine_id].tool_parser == ""
        problem = advice[engine_id].problems[0]
        assert "built-in" in problem and "reads this template's format" in problem
        assert "tool calls would come back as plain text in the content" in problem
        assert "Closest:" in problem
        assert "--tool-call-parser" not in advice[engine_id].flags
    # llama.cpp derives its parser from the template, so it reads this format too.
    assert advice["llamacpp"].ok and advice["llamacpp"].flags[0] == "--jinja"


def test_a_template_without_calls_or_reasoning_needs_no_parser() -> None:
    advice = advice_for(FORMATS / "plain.jinja")
    assert advice["vllm"].flags == ("--chat-template", "t.jinja")
    assert any("no tool-call parser needed" in note for note in advice["vllm"].notes)


def test_reasoning_the_prompt_opens_needs_a_parser_that_reads_it_without_start() -> None:
    advice = advice_for(FORMATS / "think_forced_open.jinja")
    chosen = {p.name: p for p in engine("sglang").reasoning_parsers}
    assert advice["sglang"].reasoning_parser != "qwen3"
    assert chosen[advice["sglang"].reasoning_parser].accepts_missing_start


def test_markers_that_fit_but_need_the_start_say_what_would_break() -> None:
    sglang = engine("sglang")
    qwen3 = next(p for p in sglang.reasoning_parsers if p.name == "qwen3")
    only_qwen3 = dataclasses.replace(sglang, reasoning_parsers=(qwen3,))
    analysis = analyze(load_template_file(FORMATS / "think_forced_open.jinja"))
    advice = advise(only_qwen3, analysis, "t.jinja")
    assert advice.reasoning_parser == ""
    assert "need the start marker in the output" in advice.problems[0]
    assert "reasoning would come back as content" in advice.problems[0]


@needs_corpus
def test_a_dedicated_handler_maps_to_the_engines_own_parsers() -> None:
    advice = advice_for(CORPUS / "openai-gpt-oss-120b.jinja")
    assert (advice["vllm"].tool_parser, advice["vllm"].reasoning_parser) == (
        "openai", "openai_gptoss")
    assert advice["sglang"].tool_parser == "gpt-oss"


@needs_corpus
def test_a_handler_only_one_engine_has_is_a_problem_on_the_others() -> None:
    advice = advice_for(CORPUS / "muse-glimmer.jinja")
    assert advice["sglang"].tool_parser == "muse"
    assert not advice["vllm"].ok and "tool calls would come back as plain text" in \
        advice["vllm"].problems[0]
    assert not advice["llamacpp"].ok and "muse-atem-recipients" in advice["llamacpp"].problems[0]


@needs_corpus
def test_the_reasoning_parser_of_the_tool_parsers_family_comes_first() -> None:
    advice = advice_for(CORPUS / "Qwen3.5-4B.jinja")
    assert advice["vllm"].reasoning_parser == "qwen3"
    assert advice["sglang"].reasoning_parser == "qwen3-thinking"


def test_the_command_line_is_shell_quoted() -> None:
    advice = serve_advice(analyze(load_template_file(FORMATS / "tools_tagged.jinja")),
                          template_path="my template.jinja")
    assert "'my template.jinja'" in advice[0].command_line
    assert advice[0].command_line.startswith("vllm serve MODEL ")
