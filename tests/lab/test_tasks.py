"""The analysis task: claim the row, call the analyzer once, store the result or the error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lab.analyses import engine, intake
from lab.analyses.models import Analysis
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db


def _queued(source: str) -> Analysis:
    template = intake.store_template(engine.load_pasted(source))
    return Analysis.objects.create(
        template=template, analyzer_version=engine.analyzer_version(), options_key="x"
    )


def test_it_stores_the_result_json_and_timings(corpus_templates: Path) -> None:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    analysis = _queued(source)
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE
    result = json.loads(analysis.result_json)
    assert result["template_sha256"] == analysis.template.sha256
    # Qwen3 wraps reasoning in <think>...</think> (read off the template source).
    assert (result["reasoning"]["start"], result["reasoning"]["end"]) == ("<think>", "</think>")
    assert analysis.duration_ms is not None and analysis.duration_ms > 0
    assert analysis.started_at is not None and analysis.finished_at >= analysis.started_at


def test_a_template_that_cannot_be_analyzed_fails_with_the_analyzers_message() -> None:
    analysis = _queued("{% if %}")
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED
    assert "syntax error at line 1" in analysis.error
    assert analysis.result_json == ""
    assert analysis.template.source == "{% if %}"  # the template is kept


def test_a_missing_analysis_is_ignored() -> None:
    run_analysis(123456)  # must not raise
    assert not Analysis.objects.exists()


def test_an_analysis_already_taken_is_not_run_twice() -> None:
    analysis = _queued("{% if %}")
    Analysis.objects.filter(pk=analysis.pk).update(status=Analysis.Status.RUNNING)
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert (analysis.status, analysis.error) == (Analysis.Status.RUNNING, "")


HOSTILE = Path(__file__).resolve().parents[1] / "analyzer" / "fixtures" / "hostile"
HOSTILE_MESSAGES = {
    "list_compare_bomb": "hit the output_size limit (line 1: the repeated sequence would be",
    "kept_strings": "hit the output_size limit (line 1: the repeated sequence would be",
    "newline_bomb": "1,999,000 characters; the limit is 32,768",
    "nested_loops": "hit the time limit (line 1: rendering took longer than 1 s",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_MESSAGES))
def test_a_hostile_template_fails_with_a_message_naming_the_limit(name: str) -> None:
    analysis = _queued((HOSTILE / f"{name}.jinja").read_text())
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED
    assert analysis.error.startswith("the analysis was stopped: the render ")
    assert HOSTILE_MESSAGES[name] in analysis.error
    assert analysis.result_json == ""


def test_an_analysis_past_its_wall_clock_is_killed_and_fails(settings: Any) -> None:
    settings.LAB_ANALYSIS_WALL_SECONDS = 0.3
    analysis = _queued((HOSTILE / "nested_loops.jinja").read_text())
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED
    assert analysis.error == "the analysis was stopped: it took longer than 0.3 s (wall clock)"


def test_a_result_over_the_stored_size_cap_fails_instead(settings: Any) -> None:
    settings.LAB_MAX_RESULT_BYTES = 1000
    analysis = _queued("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}")
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED
    assert analysis.error.startswith("the analysis result is ")
    assert analysis.error.endswith(" bytes of JSON; the lab stores at most 1,000 bytes")
    assert analysis.result_json == ""
