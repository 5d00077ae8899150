"""Every tool-capable corpus template: its generated parser reads the call it renders itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.analysis.pipeline import analyze
from analyzer.analysis.variants import ARG_A, ARG_B, FUNC_A, TOOLS, VAL_A, VAL_B
from analyzer.generator import generate_parser
from analyzer.model import Comparison
from analyzer.parsing.options import ParseOptions
from analyzer.render.loading import load_template_file

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "templates"
TEMPLATES = sorted(CORPUS.glob("*.jinja")) if CORPUS.is_dir() else []


def rendered_call(comparison: Comparison, prompt: str) -> str:
    """Cut the one-call render from the generation prompt's end to the end of the call."""
    assert comparison.variant_b is not None and comparison.diff is not None
    text = comparison.variant_b.rendered
    start, end = len(comparison.diff.prefix), len(text) - len(comparison.diff.suffix)
    at = text.rfind(prompt, 0, start) if prompt else -1
    return text[at + len(prompt) if at >= 0 else start : end]


@pytest.mark.skipif(not TEMPLATES, reason="../shared corpus templates are not present")
@pytest.mark.parametrize("path", TEMPLATES, ids=lambda path: path.stem)
def test_the_parser_reads_the_templates_own_call(path: Path) -> None:
    analysis = analyze(load_template_file(path))
    one_call = next((c for c in analysis.comparisons if c.id == "T1" and c.status == "ok"), None)
    if one_call is None:
        pytest.skip("the template renders no tool call")
    parser = generate_parser(analysis, ParseOptions.make(tools=TOOLS))
    report = parser.parse_report(rendered_call(one_call, parser.generation_prompt))
    assert [(c.name, json.loads(c.arguments)) for c in report.message.tool_calls] == [
        (FUNC_A, {ARG_A: VAL_A, ARG_B: VAL_B})]
    assert report.problems == ()


BENCH = CORPUS / ".." / ".." / "bench-inputs" / "qwen3-coder"


@pytest.mark.skipif(not BENCH.is_dir(), reason="../shared bench inputs are not present")
def test_python_spelled_booleans_the_template_writes_parse_as_booleans() -> None:
    request = json.loads((BENCH / "request.json").read_text(encoding="utf-8"))
    options = request["options"]
    parser = generate_parser(
        analyze(load_template_file(CORPUS / request["template"])),
        ParseOptions.make(tools=options["tools"], parallel_tool_calls=True,
                          enable_thinking=options.get("enable_thinking")))
    raw = (BENCH / "output-25k.template-raw.txt").read_text(encoding="utf-8")
    assert "\nTrue\n</parameter>" in raw
    expected = json.loads((BENCH / "expected-25k.json").read_text(encoding="utf-8"))
    message = parser.parse(raw)
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
        (c["name"], c["arguments"]) for c in expected["tool_calls"]]
