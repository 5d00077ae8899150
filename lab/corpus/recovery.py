"""Close corpus runs that can no longer close themselves, and cancel runs on request.

A run closes when its chord's callback fires; if a worker or the broker lost a template's task
or the callback, it would stay `running` for good. The reconciler (Celery beat) closes a run
once every template has its row, or once no row arrived for LAB_RUN_STALE_SECONDS: the missing
templates get error rows saying why, so the run's figures and its diff stay honest.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from lab.corpus import runs
from lab.corpus.models import CorpusRun, CorpusTemplate

LOST = "its task was lost (a worker or the broker died) and the run was closed without it"
CANCELLED = "the run was cancelled before this template was evaluated"


def pending_runs() -> list[CorpusRun]:
    """Runs not closed yet."""
    pending = [CorpusRun.Status.QUEUED, CorpusRun.Status.RUNNING]
    return list(CorpusRun.objects.filter(status__in=pending))


def last_activity(run: CorpusRun) -> datetime:
    """When the run was created or last stored a row, whichever is later."""
    latest = run.results.aggregate(latest=Max("created_at"))["latest"]
    return max(run.created_at, latest) if latest else run.created_at


def is_abandoned(run: CorpusRun) -> bool:
    """Every row is stored (the callback got lost), or none arrived for too long."""
    if run.results.count() >= run.total:
        return True
    quiet_since = timezone.now() - timedelta(seconds=settings.LAB_RUN_STALE_SECONDS)
    return last_activity(run) < quiet_since


def close_abandoned_runs() -> list[int]:
    """Close every run that cannot close itself; return their ids."""
    closed = [run.pk for run in pending_runs() if is_abandoned(run)]
    for run_id in closed:
        close_without_missing(run_id, LOST, note="closed by the reconciler: tasks were lost")
    return closed


def cancel_run(run_id: int) -> CorpusRun | None:
    """Stop waiting for a run: its missing templates fail as cancelled and it closes now."""
    return close_without_missing(run_id, CANCELLED, note="cancelled")


def close_without_missing(run_id: int, reason: str, note: str) -> CorpusRun | None:
    """Give every template without a row an error row, then close the run with a note."""
    run = CorpusRun.objects.filter(pk=run_id).first()
    if run is None or not run.is_pending:
        return run
    missing = CorpusTemplate.objects.filter(active=True).exclude(results__run=run)
    for entry in missing.values_list("pk", flat=True):
        runs.evaluate_failure(run_id, entry, reason)
    CorpusRun.objects.filter(pk=run_id).update(note=note)
    return runs.close_run(run_id)
