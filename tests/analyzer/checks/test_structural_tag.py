"""The tool-call format as a structural tag, read off a render, checked with llguidance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.analysis.pipeline import analyze
from analyzer.checks.structural_tag import (
    EXAMPLE_TOOL,
    call_text,
    check_structural_tag,
    structural_tag,
)
from analyzer.gbnf.check import match_lark
from analyzer.model import Analysis
from analyzer.render.loading import TemplateSource, load_template_file

pytest.importorskip("llguidance", reason="llguidance is not installed")
FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def loaded(name: str) -> tuple[TemplateSource, Analysis]:
    template = load_template_file(FORMATS / name)
    return template, analyze(template)


def test_json_calls_in_tool_call_tags_become_begin_schema_end() -> None:
    template, analysis = loaded("tools_json_native.jinja")
    tag = structural_tag(template, analysis)
    assert tag.available and tag.triggers == ("<tool_call>",)
    structure = tag.structures[0]
    assert structure.begin.startswith("<tool_call>") and '"get_weather"' in structure.begin
    assert structure.end.endswith("</tool_call>")
    assert json.loads(structure.schema) == EXAMPLE_TOOL["function"]["parameters"]
    data = tag.to_dict()
    assert data["type"] == "structural_tag" and data["structures"][0]["schema"]["type"] == "object"


def test_llguidance_accepts_the_templates_own_call_and_refuses_wrong_arguments() -> None:
    template, analysis = loaded("tools_json_native.jinja")
    assert check_structural_tag(template, analysis).accepted
    tag = structural_tag(template, analysis)
    call = call_text(template, EXAMPLE_TOOL, {"city": "Paris"}, analysis)
    wrong = call.replace('"city"', '"town"')
    assert match_lark(tag.lark(), call).accepted and not match_lark(tag.lark(), wrong).accepted


def test_one_structure_per_tool() -> None:
    template, analysis = loaded("tools_indexed.jinja")
    other = {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"zone": {"type": "string"}}}}}
    tag = structural_tag(template, analysis, (EXAMPLE_TOOL, other))
    assert [("get_weather" in s.begin, "get_time" in s.begin) for s in tag.structures] == [
        (True, False), (False, True)]
    assert tag.triggers == ("<|tool_calls_section_begin|>",)


def test_tagged_arguments_have_no_structural_tag_and_say_why() -> None:
    template, analysis = loaded("tools_tagged.jinja")
    tag = structural_tag(template, analysis)
    assert not tag.available and "not JSON arguments" in tag.problem
    assert check_structural_tag(template, analysis) is None


def test_a_call_id_written_in_the_call_is_noted() -> None:
    template, analysis = loaded("tools_id_first.jinja")
    tag = structural_tag(template, analysis)
    assert tag.available and "call id" in tag.note


def test_calls_without_an_opening_marker_have_no_trigger() -> None:
    template, analysis = loaded("tools_tag_json.jinja")
    tag = structural_tag(template, analysis)
    assert "no marker opens a call" in tag.problem


CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "templates"
CORPUS_FILES = sorted(CORPUS.glob("*.jinja")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS_FILES, reason="../shared/corpus/templates is not available")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.stem)
def test_every_corpus_tag_accepts_its_templates_own_call(path: Path) -> None:
    template = load_template_file(path)
    analysis = analyze(template)
    tag = structural_tag(template, analysis)
    if not tag.available:
        assert tag.problem  # says why there is none
        return
    verdict = check_structural_tag(template, analysis)
    assert verdict is not None and verdict.accepted, verdict and verdict.describe()
