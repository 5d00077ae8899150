"""The lab's door to the daily tools: render a stored template, compare two, serve one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.analyses import engine, intake, workbench
from lab.analyses.models import Analysis, Template
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db
FORMATS = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"


def stored(name: str, bos: str = "", eos: str = "") -> Template:
    source = engine.load_pasted((FORMATS / name).read_text())
    source = engine.TemplateSource(source.source, bos_token=bos, eos_token=eos)
    return intake.store_template(source)


def test_it_renders_a_request_with_the_stored_special_tokens() -> None:
    template = stored("plain.jinja", bos="<s>")
    template.source = "{{ bos_token }}{{ messages[0].content }}"
    template.save()
    result = workbench.render_stored(template, json.dumps({"messages": [
        {"role": "user", "content": "hi"}]}))
    assert result.prompt == "<s>hi"
    override = workbench.render_stored(template, json.dumps({
        "messages": [{"role": "user", "content": "hi"}], "bos_token": "[B]"}))
    assert override.prompt == "[B]hi"


def test_a_pair_of_requests_is_diffed() -> None:
    template = stored("think_forced_closed.jinja")
    base = {"messages": [{"role": "user", "content": "Hi"}], "kwargs": {"enable_thinking": True}}
    pair = workbench.render_pair(template, json.dumps(base),
                                 json.dumps({**base, "kwargs": {"enable_thinking": False}}))
    assert pair.changed_inputs == ("kwargs.enable_thinking",) and not pair.identical


def test_a_bad_request_raises_an_analyzer_error_naming_the_field() -> None:
    template = stored("plain.jinja")
    with pytest.raises(engine.AnalyzerError, match=r"messages\[0\]"):
        workbench.render_stored(template, json.dumps({"messages": [{"content": "x"}]}))


def test_two_stored_templates_compare() -> None:
    comparison = workbench.compare_stored(stored("think_tag_based.jinja"),
                                          stored("think_forced_open.jinja"))
    assert any(change.field == "reasoning.mode" for change in comparison.analysis)
    assert json.loads(workbench.comparison_json(comparison))["behaviour"]


def test_serve_it_gives_flags_and_a_checked_structural_tag() -> None:
    analysis = intake.request_analysis(stored("tools_json_native.jinja"))
    run_analysis(analysis.pk)
    analysis = Analysis.objects.select_related("template").get(pk=analysis.pk)
    served = workbench.serve_it(analysis)
    assert {a.engine: a.tool_parser for a in served.engines}["vllm"] == "hermes"
    assert served.structural_tag.available and served.llguidance_verdict == "accepted"
