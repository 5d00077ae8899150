"""The lab's doors to the daily tools: render a stored template, compare two, serve one;
a hostile template ends within the render bound with a message naming the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.errors import AnalysisLimitError
from lab.analyses import comparing, engine, intake, playground, serving
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
    result = playground.render_stored(template, json.dumps({"messages": [
        {"role": "user", "content": "hi"}]}))
    assert result.prompt == "<s>hi"
    override = playground.render_stored(template, json.dumps({
        "messages": [{"role": "user", "content": "hi"}], "bos_token": "[B]"}))
    assert override.prompt == "[B]hi"


def test_a_pair_of_requests_is_diffed() -> None:
    template = stored("think_forced_closed.jinja")
    base = {"messages": [{"role": "user", "content": "Hi"}], "kwargs": {"enable_thinking": True}}
    pair = playground.render_pair(template, json.dumps(base),
                                 json.dumps({**base, "kwargs": {"enable_thinking": False}}))
    assert pair.changed_inputs == ("kwargs.enable_thinking",) and not pair.identical


def test_a_bad_request_raises_an_analyzer_error_naming_the_field() -> None:
    template = stored("plain.jinja")
    with pytest.raises(engine.AnalyzerError, match=r"messages\[0\]"):
        playground.render_stored(template, json.dumps({"messages": [{"content": "x"}]}))


def test_two_stored_templates_compare() -> None:
    comparison = comparing.compare_stored(stored("think_tag_based.jinja"),
                                          stored("think_forced_open.jinja"))
    assert any(change.field == "reasoning.mode" for change in comparison.analysis)
    assert json.loads(comparing.comparison_json(comparison))["behaviour"]


def test_serve_it_gives_flags_and_a_checked_structural_tag() -> None:
    analysis = intake.request_analysis(stored("tools_json_native.jinja"))
    run_analysis(analysis.pk)
    analysis = Analysis.objects.select_related("template").get(pk=analysis.pk)
    card = serving.serve_card(analysis.template, analysis.result_json)
    assert {a.engine: a.tool_parser for a in card.engines}["vllm"] == "hermes"
    assert card.tag_json and card.tag_check == "accepted"


# Loops far past any clock: the render's own clock, or the child's wall clock, ends it.
SPINNING = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
USER_HI = json.dumps({"messages": [{"role": "user", "content": "hi"}]})


def hostile() -> Template:
    template = stored("plain.jinja")
    template.source = SPINNING
    template.save()
    return template


def test_a_hostile_render_ends_with_the_limit_named() -> None:
    with pytest.raises(engine.AnalyzerError, match=r"took longer than \d+ s"):
        playground.render_stored(hostile(), USER_HI)


def test_the_render_runs_in_a_child_killed_at_its_wall_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Even a harmless render outruns a clock this short: only the child's kill can end it here.
    monkeypatch.setattr(playground, "RENDER_SECONDS", 0.001)
    with pytest.raises(AnalysisLimitError, match="the render was stopped: .*wall clock"):
        playground.render_stored(stored("think_tag_based.jinja"), USER_HI)


def test_a_hostile_comparison_ends_with_the_limit_named() -> None:
    with pytest.raises(engine.AnalyzerError, match=r"took longer than \d+ s"):
        comparing.compare_stored(stored("think_tag_based.jinja"), hostile())
