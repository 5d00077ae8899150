"""The analysis task: claim the row, call the analyzer once, store the result or the error."""

from __future__ import annotations

import json
from pathlib import Path

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
