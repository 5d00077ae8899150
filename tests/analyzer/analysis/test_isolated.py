"""analyze_isolated: the analysis in a child process, killed at its wall clock or memory cap."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import pytest

from analyzer.analysis.isolated import (
    analyze_bounded,
    analyze_isolated,
    mapped_bytes,
    run_isolated,
)
from analyzer.analysis.pipeline import analyze_uncached
from analyzer.canonical import analysis_to_json
from analyzer.errors import AnalysisLimitError, IsolatedAnalysisError
from analyzer.render.loading import load_template_text
from tests.child_processes import children

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
HOSTILE = ROOT / "tests" / "analyzer" / "fixtures" / "hostile"
# Each iteration keeps 30,000 new characters: about 3 GB if nothing stopped it.
HOARDER = (
    "{% set kept = [] %}{% for i in range(100000) %}{% set _ = kept.append('x' * 30000) %}"
    "{% endfor %}{{ kept|length }}{{ messages[0].content }}"
)


def test_it_returns_the_same_json_as_an_analysis_in_process() -> None:
    source = load_template_text((FORMATS / "think_tag_based.jinja").read_text())
    assert analyze_isolated(source) == analysis_to_json(analyze_uncached(source))
    assert analysis_to_json(analyze_bounded(source)) == analyze_isolated(source)


def test_a_child_past_its_wall_clock_is_killed_with_a_message_naming_it() -> None:
    source = load_template_text((HOSTILE / "nested_loops.jinja").read_text())
    before = set(children(os.getpid()))  # a resident child may be there (test_resident)
    with pytest.raises(AnalysisLimitError) as caught:
        analyze_isolated(source, seconds=0.3)
    assert caught.value.limit == "wall_clock"
    assert str(caught.value) == "the analysis was stopped: it took longer than 0.3 s (wall clock)"
    assert set(children(os.getpid())) <= before  # the killed child was reaped


def test_a_child_past_its_memory_cap_stops_with_a_message_naming_it() -> None:
    with pytest.raises(AnalysisLimitError) as caught:
        analyze_isolated(load_template_text(HOARDER), memory_mb=64)
    assert caught.value.limit == "memory"
    assert "memory" in str(caught.value)


def test_the_childs_errors_come_back_with_their_message_and_kind() -> None:
    with pytest.raises(IsolatedAnalysisError) as caught:
        analyze_isolated(load_template_text("{% for m in messages %}{{ m.content }"))
    assert caught.value.kind == "TemplateSyntaxError"
    assert str(caught.value).startswith("template syntax error at line 1")


def test_mapped_bytes_reads_this_process_address_space() -> None:
    assert mapped_bytes() > 10 * 1024 * 1024


def test_any_job_runs_bounded_and_its_limits_name_it() -> None:
    assert run_isolated(lambda: ("made in", os.getpid()))[0] == "made in"
    assert run_isolated(lambda: os.getpid()) != os.getpid()  # in a child
    with pytest.raises(AnalysisLimitError) as caught:
        run_isolated(lambda: time.sleep(30), seconds=0.3, what="comparison")
    assert str(caught.value) == "the comparison was stopped: it took longer than 0.3 s (wall clock)"
    with pytest.raises(AnalysisLimitError) as caught:
        run_isolated(lambda: len("x" * (512 * 1024 * 1024)), memory_mb=64, what="robustness check")
    assert str(caught.value).startswith("the robustness check was stopped: it needed more than 64")


def test_the_child_leaves_the_parents_objects_out_of_its_collections() -> None:
    # A collection walking the inherited heap would copy it page by page into the child.
    assert run_isolated(gc.get_freeze_count) > 10_000
    assert gc.get_freeze_count() == 0  # the parent collects its objects as before
