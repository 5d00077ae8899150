"""The engines data file: every parser's fields exist in an analysis, and matching reads them."""

from __future__ import annotations

from pathlib import Path

from analyzer.analysis.pipeline import analyze
from analyzer.checks.engines import closest, field_value, load_engines, mismatches
from analyzer.render.loading import load_template_file

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def test_the_data_file_names_the_three_engines_and_where_each_was_read() -> None:
    engines = {e.id: e for e in load_engines()}
    assert set(engines) == {"vllm", "sglang", "llamacpp"}
    for engine in engines.values():
        assert engine.read_from and engine.version and engine.launch and engine.template_flag
        for parser in engine.tool_parsers + engine.reasoning_parsers:
            assert parser.source and parser.expects and parser.match


def test_every_match_field_is_a_field_of_an_analysis() -> None:
    analysis = analyze(load_template_file(FORMATS / "tools_tagged.jinja"))
    for engine in load_engines():
        for parser in engine.tool_parsers + engine.reasoning_parsers:
            for paths, _ in parser.match:
                for path in paths.split("|"):
                    assert isinstance(field_value(analysis, path), str), (parser.name, path)


def test_mismatches_name_the_field_the_expected_and_the_found_value() -> None:
    analysis = analyze(load_template_file(FORMATS / "tools_json_native.jinja"))
    vllm = next(e for e in load_engines() if e.id == "vllm")
    coder = next(p for p in vllm.tool_parsers if p.name == "qwen3_coder")
    found = {m.field: m for m in mismatches(coder, analysis)}
    assert found["tools.format.mode"].expected == "TAG_WITH_TAGGED"
    assert found["tools.format.mode"].found == "JSON_NATIVE"
    nearest = closest(vllm.tool_parsers, analysis)
    assert nearest is not None and nearest.name == "hermes"
