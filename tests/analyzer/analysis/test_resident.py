"""run_resident: jobs one after another in one long-lived child, each bounded as in a child of
its own. Tests hold whatever jobs ran before them (the child is shared by the whole session)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analyzer.analysis.pipeline import analyze_uncached
from analyzer.analysis.resident import analyze_resident, run_resident, stop_resident
from analyzer.canonical import analysis_to_json
from analyzer.errors import AnalysisLimitError, IsolatedAnalysisError
from analyzer.render.loading import load_template_text
from tests.child_processes import children

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
HOSTILE = ROOT / "tests" / "analyzer" / "fixtures" / "hostile"
MIB = 1024 * 1024
_kept: list[bytearray] = []  # in the child: what a job left behind for the jobs after it


def keep(mib: int) -> int:
    """Leave `mib` MiB mapped in the child; return its pid."""
    _kept.append(bytearray(mib * MIB))
    return os.getpid()


def allocate(mib: int) -> int:
    """Use `mib` MiB for the job only; return the child's pid."""
    return len(bytearray(mib * MIB)) and os.getpid()


def release_and_allocate(mib: int) -> int:
    """Let go of what earlier jobs kept, then use `mib` MiB."""
    _kept.clear()
    return allocate(mib)


def test_jobs_run_one_after_another_in_one_child() -> None:
    first = run_resident(os.getpid)
    assert first != os.getpid()
    assert run_resident(os.getpid) == first


def test_it_returns_the_same_json_as_an_analysis_in_process() -> None:
    source = load_template_text((FORMATS / "think_tag_based.jinja").read_text())
    assert analyze_resident(source) == analysis_to_json(analyze_uncached(source))


def test_a_job_past_its_wall_clock_is_killed_and_the_next_job_gets_a_new_child() -> None:
    before = run_resident(os.getpid)
    with pytest.raises(AnalysisLimitError) as caught:
        run_resident(time.sleep, 30, seconds=0.3, what="comparison")
    assert str(caught.value) == "the comparison was stopped: it took longer than 0.3 s (wall clock)"
    assert before not in children(os.getpid())  # killed and reaped
    assert run_resident(os.getpid) != before


def test_a_job_past_its_memory_cap_stops_with_a_message_naming_it() -> None:
    with pytest.raises(AnalysisLimitError) as caught:
        run_resident(allocate, 512, memory_mb=64)
    assert caught.value.limit == "memory"
    assert str(caught.value) == "the analysis was stopped: it needed more than 64 MiB of memory"


def test_memory_earlier_jobs_kept_never_changes_a_jobs_verdict() -> None:
    kept_in = run_resident(keep, 100)
    # 100 MiB more fits in 150 in a fresh child, not in one that kept 100: it runs in a new one.
    ran_in = run_resident(allocate, 100, memory_mb=150)
    assert ran_in != kept_in


def test_the_cap_counts_from_the_childs_fork_not_from_the_jobs_start() -> None:
    # Capped at "mapped at job start + 150", a job could free 100 kept MiB and use 180.
    run_resident(keep, 100)
    with pytest.raises(AnalysisLimitError) as caught:
        run_resident(release_and_allocate, 180, memory_mb=150)
    assert caught.value.limit == "memory"


def test_a_child_that_earlier_jobs_grew_past_the_threshold_is_replaced() -> None:
    grown = run_resident(keep, 300)
    assert run_resident(os.getpid) != grown
    assert grown not in children(os.getpid())


def test_a_hostile_template_stops_at_its_limit_and_the_next_analysis_runs() -> None:
    with pytest.raises(AnalysisLimitError) as caught:
        analyze_resident(load_template_text((HOSTILE / "nested_loops.jinja").read_text()))
    assert caught.value.limit == "render_time"
    source = load_template_text((FORMATS / "plain.jinja").read_text())
    assert analyze_resident(source) == analysis_to_json(analyze_uncached(source))


def test_an_error_the_analyzer_never_raises_replaces_the_child() -> None:
    before = run_resident(os.getpid)
    with pytest.raises(IsolatedAnalysisError) as caught:
        run_resident(int, "x")
    assert caught.value.kind == "ValueError"
    assert run_resident(os.getpid) != before


def test_a_template_error_comes_back_and_the_child_stays() -> None:
    before = run_resident(os.getpid)
    with pytest.raises(IsolatedAnalysisError) as caught:
        analyze_resident(load_template_text("{% for m in messages %}{{ m.content }"))
    assert caught.value.kind == "TemplateSyntaxError"
    assert run_resident(os.getpid) == before


def test_a_stopped_child_exits_and_the_next_job_forks_a_new_one() -> None:
    before = run_resident(os.getpid)
    stop_resident()
    assert before not in children(os.getpid())
    assert run_resident(os.getpid) != before


ORPHAN = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from analyzer.analysis.resident import run_resident
print(os.getpid(), flush=True)
try:
    run_resident(time.sleep, 1.5)  # the parent is killed meanwhile
except BaseException as exc:
    print("unwound into the parent's code:", os.getpid(), type(exc).__name__, flush=True)
"""


def test_a_child_whose_parent_died_exits_without_running_the_parents_code() -> None:
    process = subprocess.Popen([sys.executable, "-c", ORPHAN, str(ROOT)], stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None
    parent = int(process.stdout.readline())
    deadline = time.monotonic() + 30
    while not children(parent):
        assert time.monotonic() < deadline, "the resident child never started"
        time.sleep(0.05)
    (child,) = children(parent)
    process.kill()
    process.wait()
    assert process.stdout.read() == ""  # nothing printed by a child unwinding
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and "Z" not in status_of(child):
        assert time.monotonic() < deadline, f"the orphaned child {child} is still running"
        time.sleep(0.1)


def status_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"
