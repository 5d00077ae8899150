"""Who may run an analysis: a task claims the row with a lease, and only the holder finishes it.

A row can be taken when it is queued, when its lease expired (the worker that held it died and
stopped renewing it, see lab.analyses.heartbeat), or
by the same task id again (Celery redelivers a message only once its earlier delivery is over:
the pool child running it was killed, see CELERY_TASK_REJECT_ON_WORKER_LOST). A row taken more
than LAB_MAX_ATTEMPTS times kills its workers every time: it is failed instead of run again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from lab.analyses.models import Analysis


def lease_end() -> datetime:
    """When a lease taken now expires."""
    return timezone.now() + timedelta(seconds=settings.LAB_LEASE_SECONDS)


def takeable(task_id: str) -> Q:
    """The rows a task with this id may claim."""
    running = Q(status=Analysis.Status.RUNNING)
    expired = running & Q(lease_until__lt=timezone.now())
    return Q(status=Analysis.Status.QUEUED) | expired | (running & Q(claimed_by=task_id))


def claim(analysis_id: int, task_id: str) -> bool:
    """Take the row for this task; False if it is gone, finished or held by a live task."""
    claimed = Analysis.objects.filter(takeable(task_id), pk=analysis_id).update(
        status=Analysis.Status.RUNNING,
        started_at=timezone.now(),
        lease_until=lease_end(),
        claimed_by=task_id,
        attempts=F("attempts") + 1,
    )
    if not claimed:
        return False
    attempts = Analysis.objects.values_list("attempts", flat=True).get(pk=analysis_id)
    if attempts > settings.LAB_MAX_ATTEMPTS:
        finish(analysis_id, task_id, error=too_many_attempts(attempts - 1))
        return False
    return True


def renew(analysis_id: int, task_id: str) -> bool:
    """Extend the lease of a row this task still holds; tell whether it does."""
    renewed = Analysis.objects.filter(
        pk=analysis_id, status=Analysis.Status.RUNNING, claimed_by=task_id
    ).update(lease_until=lease_end())
    return bool(renewed)


def too_many_attempts(attempts: int) -> str:
    """The error of a row whose workers kept dying."""
    return (
        f"the worker analysing this template died {attempts} times (killed, out of memory, "
        f"or past the hard time limit); it is not tried again"
    )


def finish(
    analysis_id: int,
    task_id: str,
    *,
    result_json: str = "",
    error: str = "",
    duration_ms: float | None = None,
) -> bool:
    """Store the outcome if this task still holds the row; tell whether it did."""
    status = Analysis.Status.FAILED if error else Analysis.Status.DONE
    stored = Analysis.objects.filter(
        pk=analysis_id, status=Analysis.Status.RUNNING, claimed_by=task_id
    ).update(
        status=status,
        result_json=result_json,
        error=error,
        duration_ms=duration_ms,
        finished_at=timezone.now(),
        lease_until=None,
    )
    return bool(stored)
