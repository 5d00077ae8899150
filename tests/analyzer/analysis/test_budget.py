"""The analysis budget: total rendering time, and limits that every later render would hit."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.analysis.budget import analysis_budget, current_analysis_budget
from analyzer.analysis.pipeline import analyze_uncached
from analyzer.errors import AnalysisLimitError
from analyzer.render.loading import load_template_text

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "tests" / "analyzer" / "fixtures" / "hostile"
TOOLS_ONLY_BOMB = (
    "{% if tools %}{{ 'x' * 100000 }}{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def hostile(name: str) -> str:
    return (HOSTILE / f"{name}.jinja").read_text()


def test_a_render_out_of_time_stops_the_whole_analysis_at_once() -> None:
    with pytest.raises(AnalysisLimitError) as caught:
        analyze_uncached(load_template_text(hostile("nested_loops")))
    assert caught.value.limit == "render_time"
    assert "hit the time limit (line 1: rendering took longer than 1 s" in str(caught.value)
    assert str(caught.value).endswith("the other renders would hit it too")


def test_the_renders_of_one_analysis_share_one_time_budget() -> None:
    with analysis_budget(0.0), pytest.raises(AnalysisLimitError) as caught:
        analyze_uncached(load_template_text(TOOLS_ONLY_BOMB))
    assert caught.value.limit == "analysis_time"
    assert str(caught.value) == (
        "the analysis was stopped: its renders took longer than 0 s in total (0 renders done)"
    )


def test_a_limit_hit_by_the_first_renders_stops_the_analysis() -> None:
    with pytest.raises(AnalysisLimitError) as caught:
        analyze_uncached(load_template_text(hostile("newline_bomb")))
    assert caught.value.limit == "render_limit"
    assert "1,999,000 characters; the limit is 32,768" in str(caught.value)


def test_a_limit_only_some_inputs_hit_leaves_those_comparisons_unsupported() -> None:
    analysis = analyze_uncached(load_template_text(TOOLS_ONLY_BOMB))
    notes = [c.note for c in analysis.comparisons if c.status == "unsupported"]
    assert notes and all("the limit is 32,768" in note for note in notes)
    assert any(c.status == "ok" for c in analysis.comparisons)  # the analysis went on


def test_an_analysis_outside_any_block_has_a_budget_only_while_it_runs() -> None:
    assert current_analysis_budget().seconds == float("inf")
    with analysis_budget(5.0) as budget, analysis_budget(1.0) as inner:
        assert inner is budget  # a nested analysis (lenient retry) spends the same budget
    assert current_analysis_budget().seconds == float("inf")
