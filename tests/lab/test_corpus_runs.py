"""Corpus runs with Celery tasks inline: rows, reuse of analyses, closing, regressions, command."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from analyzer.checks.robustness import check_robustness, pass_rate
from analyzer.render.loading import load_template_file
from lab.analyses.models import Analysis
from lab.corpus import entries, launch, runs
from lab.corpus.diffs import compare, diff_runs
from lab.corpus.models import CorpusResult, CorpusRun, CorpusTemplate

pytestmark = pytest.mark.django_db

SMALL = ("Qwen3-Coder", "google-gemma-2-2b-it", "meta-llama-Llama-3.1-8B-Instruct")


@pytest.fixture
def small_corpus(corpus_templates: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in SMALL:
        shutil.copy(corpus_templates / f"{name}.jinja", folder)
    entries.import_directory(folder)
    return folder


@pytest.fixture
def run_now(django_capture_on_commit_callbacks: Any) -> Callable[[], CorpusRun]:
    """Start a run; its tasks run inline when the transaction's callbacks fire."""

    def start() -> CorpusRun:
        with django_capture_on_commit_callbacks(execute=True):
            run = launch.start_run("test")
        run.refresh_from_db()
        return run

    return start


def vector_count(corpus_templates: Path, filename: str) -> int:
    counts = corpus_templates / ".." / "vectors" / "llamacpp-test-chat.counts.tsv"
    with counts.open() as rows:
        return next(
            int(r["vectors"])
            for r in csv.DictReader(rows, delimiter="\t")
            if r["template"] == filename
        )


def row(run: CorpusRun, name: str) -> CorpusResult:
    return CorpusResult.objects.get(run=run, name=name)


def test_a_run_evaluates_every_active_template_and_closes(
    small_corpus: Path, run_now: Callable[[], CorpusRun]
) -> None:
    run = run_now()
    assert run.status == CorpusRun.Status.DONE
    assert run.total == 3
    assert sorted(run.results.values_list("name", flat=True)) == sorted(SMALL)
    assert run.errors == 0
    assert run.finished_at is not None and run.started_at is not None
    assert run.baseline is None  # the first run has nothing to compare with


def test_a_row_summarizes_the_analysis_verification_and_vectors(
    small_corpus: Path, run_now: Callable[[], CorpusRun], corpus_templates: Path
) -> None:
    coder = row(run_now(), "Qwen3-Coder")
    # Qwen3-Coder writes each call as <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE...
    assert coder.tool_format == "TAG_WITH_TAGGED"
    assert coder.markers["tools.format.per_call_start"] == "<tool_call>"
    assert coder.markers["tools.function.name_prefix"] == "<function="
    assert "<parameter=" in coder.key_markers
    assert coder.round_trip == "pass" and coder.grammar == "pass"
    assert coder.cases_total == coder.cases_passed >= 7
    assert coder.vectors_total == vector_count(corpus_templates, "Qwen3-Coder.jinja")
    assert coder.analysis_ms is not None and coder.analysis_ms > 0
    verification = json.loads(coder.verification_json)
    assert verification["template_sha256"] == coder.template_sha256
    robustness = check_robustness(load_template_file(corpus_templates / "Qwen3-Coder.jinja"))
    assert (coder.robustness_passed, coder.robustness_total) == pass_rate([robustness])
    assert coder.robustness_total > 0


def test_a_row_links_to_the_analysis_permalink_it_evaluated(
    small_corpus: Path, run_now: Callable[[], CorpusRun]
) -> None:
    gemma = row(run_now(), "google-gemma-2-2b-it")
    analysis = Analysis.objects.get(pk=gemma.analysis_id)
    assert analysis.status == Analysis.Status.DONE
    assert analysis.template.sha256 == gemma.template_sha256
    assert json.loads(analysis.result_json)["template_sha256"] == gemma.template_sha256
    assert gemma.analyzer_version == analysis.analyzer_version
    assert gemma.tool_format == "NONE"  # gemma 2's template has no tools at all
    assert gemma.grammar == "skip"


def test_a_second_run_reuses_the_analyses_and_finds_nothing_changed(
    small_corpus: Path, run_now: Callable[[], CorpusRun]
) -> None:
    first, second = run_now(), run_now()
    assert second.baseline == first
    assert (second.changed, second.regressions, second.improvements) == (0, 0, 0)
    assert row(first, "Qwen3-Coder").analysis_id == row(second, "Qwen3-Coder").analysis_id


def test_a_deliberately_worsened_result_is_a_regression(
    small_corpus: Path, run_now: Callable[[], CorpusRun]
) -> None:
    first, second = run_now(), run_now()
    CorpusResult.objects.filter(run=second, name="Qwen3-Coder").update(
        round_trip="fail", cases_failed=2, failed_cases="call,call-nested", grammar="fail"
    )
    closed = runs.close_run(second.pk)
    assert closed is not None and closed.regressions == 1 and closed.is_worse
    diff = diff_runs(first, second)
    assert [t.name for t in diff.regressions] == ["Qwen3-Coder"]
    fields = {c.field: c for c in diff.regressions[0].changes}
    assert fields["round_trip"].before.startswith("pass (")
    assert fields["round_trip"].after.startswith("fail (")
    assert fields["round_trip"].worse and fields["grammar"].worse


def test_a_template_the_analyzer_cannot_read_gets_an_error_row(
    small_corpus: Path, run_now: Callable[[], CorpusRun]
) -> None:
    (small_corpus / "broken.jinja").write_text("{% for m in messages %}{{ m.content ")
    entries.import_directory(small_corpus)
    run = run_now()
    broken = row(run, "broken")
    assert broken.status == CorpusResult.Status.ERROR
    assert broken.error.startswith("analysis failed: template syntax error")
    assert run.status == CorpusRun.Status.DONE and run.errors == 1


def test_a_result_over_the_size_cap_is_an_error_row_and_is_not_stored(
    small_corpus: Path, run_now: Callable[[], CorpusRun], settings: Any
) -> None:
    settings.LAB_MAX_RESULT_BYTES = 2_000  # below every corpus template's analysis JSON
    run = run_now()
    assert run.errors == len(SMALL)
    for result in run.results.all():
        assert result.error.startswith("the analysis result is ")
        assert result.error.endswith("bytes of JSON; the lab stores at most 2,000 bytes")
    assert not Analysis.objects.exists()


def test_a_verification_over_the_size_cap_is_an_error_row(
    small_corpus: Path, run_now: Callable[[], CorpusRun], settings: Any
) -> None:
    qwen = row(run_now(), "Qwen3-Coder")
    # The second run reuses the stored analysis; its new verification is one byte too large.
    settings.LAB_MAX_RESULT_BYTES = len(qwen.verification_json.encode()) - 1
    again = row(run_now(), "Qwen3-Coder")
    assert again.status == CorpusResult.Status.ERROR and again.verification_json == ""
    assert again.error.startswith("the verification result is ")
    assert again.analysis_id == qwen.analysis_id


def test_retired_templates_are_left_out_of_new_runs(
    small_corpus: Path, run_now: Callable[[], CorpusRun]
) -> None:
    CorpusTemplate.objects.filter(name="Qwen3-Coder").update(active=False)
    run = run_now()
    assert run.total == 2
    assert not run.results.filter(name="Qwen3-Coder").exists()


def test_an_empty_corpus_closes_at_once(run_now: Callable[[], CorpusRun]) -> None:
    run = run_now()
    assert run.status == CorpusRun.Status.DONE and run.total == 0


def test_evaluating_twice_keeps_one_row(
    small_corpus: Path, run_now: Callable[[], CorpusRun]
) -> None:
    run = run_now()
    entry = CorpusTemplate.objects.get(name="Qwen3-Coder")
    again = runs.evaluate_entry(run.pk, entry.pk)  # a redelivered task
    assert again is not None and again == row(run, "Qwen3-Coder")
    assert run.results.filter(entry=entry).count() == 1


# --- what counts as worse ------------------------------------------------------------------

BASE_ROW: dict[str, Any] = {
    "status": "done",
    "tool_format": "JSON_NATIVE",
    "reasoning_mode": "NONE",
    "content_mode": "PLAIN",
    "template_sha256": "a" * 64,
    "round_trip": "pass",
    "cases_passed": 6,
    "cases_failed": 0,
    "cases_total": 6,
    "failed_cases": "",
    "grammar": "pass",
    "vectors_total": 4,
    "vectors_passed": 4,
    "markers_json": json.dumps({"tools.format.section_start": "<tool_call>"}),
}


def changed(**fields: Any) -> dict[str, Any]:
    return {**BASE_ROW, **fields}


def test_identical_rows_have_no_changes() -> None:
    assert compare(BASE_ROW, dict(BASE_ROW)) == ()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"status": "error"}, "status"),
        ({"tool_format": "NONE"}, "tool_format"),
        ({"round_trip": "fail", "cases_failed": 1, "cases_passed": 5}, "round_trip"),
        ({"round_trip": "skip"}, "round_trip"),
        ({"grammar": "fail"}, "grammar"),
        ({"vectors_passed": 3}, "vectors"),
    ],
)
def test_losing_something_is_worse(fields: dict[str, Any], field: str) -> None:
    changes = {c.field: c for c in compare(BASE_ROW, changed(**fields))}
    assert changes[field].worse and not changes[field].better


def test_more_failing_cases_in_a_failing_run_is_worse() -> None:
    before = changed(round_trip="fail", cases_failed=1, failed_cases="call")
    after = changed(round_trip="fail", cases_failed=2, failed_cases="call,call-id")
    (change,) = compare(before, after)
    assert change.worse and (change.before, change.after) == (
        "fail (6/6: call)",
        "fail (6/6: call, call-id)",
    )


def test_fixing_something_is_better_and_a_new_marker_is_just_a_change() -> None:
    changes = {
        c.field: c
        for c in compare(
            changed(round_trip="fail", cases_failed=1),
            changed(markers_json=json.dumps({"tools.format.section_start": "<calls>"})),
        )
    }
    assert changes["round_trip"].better
    marker = changes["tools.format.section_start"]
    assert (marker.before, marker.after, marker.worse, marker.better) == (
        "<tool_call>",
        "<calls>",
        False,
        False,
    )


def test_a_template_missing_from_one_run_is_listed() -> None:
    (change,) = compare(None, BASE_ROW)
    assert (change.field, change.before, change.after) == ("template", "absent", "present")


# --- the command -----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_corpus_import_and_run_commands_print_what_they_did(
    corpus_templates: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    for name in SMALL[:2]:
        shutil.copy(corpus_templates / f"{name}.jinja", folder)
    call_command("corpus", "import", str(folder))
    call_command("corpus", "run", "--wait", "--timeout", "120")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "import: 2 added, 0 updated, 0 unchanged, 0 problem(s)"
    assert out[1].startswith("run ") and "2 template(s), analyzer " in out[1]
    assert out[2].endswith(
        "done: 2 template(s), 0 error(s), round trip failed for 0, grammar failed for 0"
    )


@pytest.mark.django_db(transaction=True)
def test_corpus_run_fails_on_a_regression_when_asked(small_corpus: Path) -> None:
    call_command("corpus", "run", "--wait")
    # Deliberately claim the baseline found a tool format in gemma 2 (it has none).
    CorpusResult.objects.filter(name="google-gemma-2-2b-it").update(tool_format="JSON_NATIVE")
    with pytest.raises(CommandError) as raised:
        call_command("corpus", "run", "--wait", "--fail-on-regression")
    latest = CorpusRun.objects.order_by("-pk").first()
    assert latest is not None
    assert str(raised.value) == (
        f"run {latest.pk} made 1 template(s) worse than run {latest.baseline_id}"
    )
    assert raised.value.returncode == 1


def test_corpus_import_refuses_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="nowhere: not a directory"):
        call_command("corpus", "import", str(tmp_path / "nowhere"))
