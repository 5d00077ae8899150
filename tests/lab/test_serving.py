"""The "Serve it" card from a stored analysis (lab/analyses/serving.py) and on the page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from lab.analyses import engine, intake, serving
from lab.analyses.models import Analysis

pytestmark = pytest.mark.django_db
FORMATS = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"


def analysed(path: Path, capture: Any) -> Analysis:
    with capture(execute=True):
        analysis = intake.ingest(engine.load_file(path.read_bytes(), path.name), "import")
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE, analysis.error
    return analysis


def by_engine(analysis: Analysis) -> dict[str, Any]:
    card = serving.serve_card(analysis.template, analysis.result_json)
    return {advice.engine: advice for advice in card.engines}


def test_hermes_json_calls_map_to_the_hermes_parsers(
    corpus_templates: Path, django_capture_on_commit_callbacks: Any
) -> None:
    path = corpus_templates / "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
    advice = by_engine(analysed(path, django_capture_on_commit_callbacks))
    assert advice["vllm"].tool_parser == "hermes"
    assert advice["sglang"].tool_parser in ("hermes", "qwen25")
    assert "--tool-call-parser hermes" in advice["vllm"].command_line


def test_qwen3_coder_xml_calls_map_to_qwen3_coder(
    corpus_templates: Path, django_capture_on_commit_callbacks: Any, client: Client
) -> None:
    analysis = analysed(corpus_templates / "Qwen3-Coder.jinja", django_capture_on_commit_callbacks)
    advice = by_engine(analysis)
    assert advice["vllm"].tool_parser == advice["sglang"].tool_parser == "qwen3_coder"
    page = client.get(analysis.get_absolute_url()).content.decode()
    assert 'id="serve-vllm"' in page and "--tool-call-parser qwen3_coder" in page


def test_a_format_no_engine_has_says_what_would_break(
    django_capture_on_commit_callbacks: Any, client: Client
) -> None:
    analysis = analysed(FORMATS / "tools_markdown.jinja", django_capture_on_commit_callbacks)
    advice = by_engine(analysis)
    assert not advice["vllm"].ok
    assert "would come back as plain text" in " ".join(advice["vllm"].problems)
    page = client.get(analysis.get_absolute_url()).content.decode()
    assert "no built-in parser fits" in page and 'class="problem serve-problem"' in page
