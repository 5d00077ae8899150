"""Evaluate one template of a corpus run, and close the run with the comparison.

`lab.corpus.launch` starts a run: it fans out one Celery task per active template (a
group) with a chord that closes the run once every task has stored its result.
Tasks never raise: a template that breaks the analyzer gets an error row, so the chord
always fires.
"""

from __future__ import annotations

import json
import logging

from django.conf import settings
from django.db import IntegrityError
from django.db.models import Count, F, Q
from django.utils import timezone

from lab.analyses.models import Analysis, options_key
from lab.corpus import engine, notify
from lab.corpus.diffs import diff_runs
from lab.corpus.models import CorpusResult, CorpusRun, CorpusTemplate, EntryAttempt

log = logging.getLogger(__name__)


def mark_running(run_id: int) -> None:
    """Record when the first task of a run started."""
    CorpusRun.objects.filter(pk=run_id, status=CorpusRun.Status.QUEUED).update(
        status=CorpusRun.Status.RUNNING, started_at=timezone.now()
    )


def evaluate_entry(run_id: int, entry_id: int) -> CorpusResult | None:
    """Evaluate one template for a run and store its row (once: redelivery finds it stored)."""
    entry = CorpusTemplate.objects.select_related("template").filter(pk=entry_id).first()
    if entry is None or not CorpusRun.objects.filter(pk=run_id).exists():
        return None
    mark_running(run_id)
    existing = CorpusResult.objects.filter(run_id=run_id, entry=entry).first()
    if existing is not None:
        return existing
    attempts = count_attempt(run_id, entry_id)
    fields = (
        failed_fields(too_many_attempts(attempts - 1))
        if attempts > settings.LAB_MAX_ATTEMPTS
        else evaluated_fields(entry)
    )
    try:
        stored = store(run_id, entry, fields)
    except IntegrityError:  # a redelivered task stored it a moment ago
        return CorpusResult.objects.filter(run_id=run_id, entry=entry).first()
    notify.announce(run_id)
    return stored


def count_attempt(run_id: int, entry_id: int) -> int:
    """Count one more start of this template's task in this run; return the count."""
    EntryAttempt.objects.get_or_create(run_id=run_id, entry_id=entry_id)
    counted = EntryAttempt.objects.filter(run_id=run_id, entry_id=entry_id)
    counted.update(attempts=F("attempts") + 1)
    return counted.values_list("attempts", flat=True).get()


def too_many_attempts(started: int) -> str:
    """The error of a template whose evaluation killed its worker process every time."""
    return (
        f"the worker evaluating this template died {started} times (killed, out of memory, or "
        f"past the hard time limit); it is not tried again"
    )


def failed_fields(message: str) -> dict[str, object]:
    """The row of a template that could not be evaluated."""
    return {
        "status": CorpusResult.Status.ERROR,
        "error": message,
        "analyzer_version": engine.analyzer_version(),
    }


class ResultTooLarge(Exception):
    """A result JSON over the lab's cap (LAB_MAX_RESULT_BYTES), which is never stored."""


def within_result_cap(what: str, text: str) -> str:
    """Return the JSON if it may be stored; raise ResultTooLarge saying how large it is."""
    size, cap = len(text.encode("utf-8")), settings.LAB_MAX_RESULT_BYTES
    if size > cap:
        raise ResultTooLarge(
            f"the {what} result is {size:,} bytes of JSON; the lab stores at most {cap:,} bytes"
        )
    return text


def evaluated_fields(entry: CorpusTemplate) -> dict[str, object]:
    """Analyse (or reuse the stored analysis), verify and run vectors; return the row's fields."""
    try:
        analysis = stored_analysis(entry)
    except engine.AnalyzerError as exc:
        return failed_fields(f"analysis failed: {exc}")
    except ResultTooLarge as exc:
        return failed_fields(str(exc))
    try:
        evaluation = engine.evaluate(entry.template, analysis.result_json)
    except Exception as exc:  # noqa: BLE001 - one broken template must not stop the run
        log.exception("corpus: evaluating %s failed", entry.name)
        return {
            **failed_fields(f"internal error ({type(exc).__name__}): {exc}"),
            "analysis": analysis,
            "analysis_ms": analysis.duration_ms,
        }
    fields = vars(evaluation).copy()
    fields["markers_json"] = markers_json(fields.pop("markers"))
    try:
        within_result_cap("verification", evaluation.verification_json)
    except ResultTooLarge as exc:
        return {**failed_fields(str(exc)), "analysis": analysis,
                "analysis_ms": analysis.duration_ms}
    return {
        **fields,
        "status": CorpusResult.Status.DONE,
        "analysis": analysis,
        "analysis_ms": analysis.duration_ms,
        "analyzer_version": analysis.analyzer_version,
    }


def markers_json(markers: dict[str, str]) -> str:
    """Store markers as sorted JSON so equal markers compare equal as text."""
    return json.dumps(markers, sort_keys=True, ensure_ascii=False)


def stored_analysis(entry: CorpusTemplate) -> Analysis:
    """Return the template's finished analysis under this analyzer version, making it if none.

    The lab's permalink /a/<id>/ then shows exactly what the run evaluated.
    """
    version = engine.analyzer_version()
    found = Analysis.objects.filter(
        template=entry.template,
        analyzer_version=version,
        options_key=options_key({}),
        status=Analysis.Status.DONE,
    ).first()
    if found is not None:
        return found
    started = timezone.now()
    result_json, elapsed_ms = engine.analyze(entry.template)
    within_result_cap("analysis", result_json)  # held to the cap of a pasted analysis
    return Analysis.objects.create(
        template=entry.template,
        analyzer_version=version,
        options={},
        options_key=options_key({}),
        status=Analysis.Status.DONE,
        result_json=result_json,
        created_at=started,
        started_at=started,
        finished_at=timezone.now(),
        duration_ms=elapsed_ms,
    )


def store(run_id: int, entry: CorpusTemplate, fields: dict[str, object]) -> CorpusResult:
    """Save one result row."""
    return CorpusResult.objects.create(
        run_id=run_id, entry=entry, name=entry.name, template_sha256=entry.template.sha256, **fields
    )


def close_run(run_id: int) -> CorpusRun | None:
    """Mark a run done and record its comparison with the previous finished run."""
    run = CorpusRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    counts = run.results.aggregate(
        round_trip_failed=Count("pk", filter=Q(round_trip="fail")),
        grammar_failed=Count("pk", filter=Q(grammar="fail")),
        errors=Count("pk", filter=Q(status=CorpusResult.Status.ERROR)),
        **rate_counts(),
    )
    for field, value in counts.items():
        setattr(run, field, value)
    run.baseline = previous_run(run)
    if run.baseline is not None:
        diff = diff_runs(run.baseline, run)
        run.regressions, run.improvements = len(diff.regressions), len(diff.improvements)
        run.changed = len(diff.templates)
    run.status = CorpusRun.Status.DONE
    run.started_at = run.started_at or timezone.now()
    run.finished_at = timezone.now()
    run.save()
    notify.announce(run_id, force=True)  # the dashboards watching it reload now
    return run


def rate_counts() -> dict[str, Count]:
    """The pass-rate counts of a run's rows, as aggregates (stored on the run when it closes)."""
    checked = ("pass", "fail")  # a skip is neither a pass nor a failure
    return {
        "round_trip_passed": Count("pk", filter=Q(round_trip="pass")),
        "round_trip_checked": Count("pk", filter=Q(round_trip__in=checked)),
        "grammar_passed": Count("pk", filter=Q(grammar="pass")),
        "grammar_checked": Count("pk", filter=Q(grammar__in=checked)),
    }


def close_pending_run(run_id: int) -> CorpusRun | None:
    """Close a run unless it is closed already (cancelled, or recovered by the reconciler)."""
    if not CorpusRun.objects.filter(
        pk=run_id, status__in=[CorpusRun.Status.QUEUED, CorpusRun.Status.RUNNING]
    ).exists():
        return None
    return close_run(run_id)


def previous_run(run: CorpusRun) -> CorpusRun | None:
    """The latest finished run created before this one."""
    return (
        CorpusRun.objects.filter(status=CorpusRun.Status.DONE, pk__lt=run.pk)
        .order_by("-pk")
        .first()
    )


def evaluate_failure(run_id: int, entry_id: int, message: str) -> None:
    """Store an error row for a template whose task was stopped (time limit)."""
    entry = CorpusTemplate.objects.select_related("template").filter(pk=entry_id).first()
    if entry is None or CorpusResult.objects.filter(run_id=run_id, entry=entry).exists():
        return
    try:
        store(run_id, entry, failed_fields(message))
    except IntegrityError:
        pass
