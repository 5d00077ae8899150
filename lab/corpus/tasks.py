"""Celery tasks of a corpus run: one per template (the chord's header), one to close the run."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from lab.corpus import runs

TIME_LIMIT = settings.LAB_ANALYSIS_TIME_LIMIT


# Results are kept (ignore_result=False): the chord counts its header's results in the backend.
@shared_task(  # type: ignore[untyped-decorator]  # Celery ships no type hints
    ignore_result=False, soft_time_limit=TIME_LIMIT, time_limit=TIME_LIMIT + 10)
def evaluate_entry_task(run_id: int, entry_id: int) -> int | None:
    """Evaluate one corpus template for a run; return the stored row's id."""
    try:
        result = runs.evaluate_entry(run_id, entry_id)
    except SoftTimeLimitExceeded:
        runs.evaluate_failure(run_id, entry_id, f"stopped after {TIME_LIMIT} s (time limit)")
        return None
    return result.pk if result is not None else None


@shared_task  # type: ignore[untyped-decorator]  # Celery ships no type hints
def close_run_task(run_id: int) -> None:
    """Close a run once every template task has finished."""
    runs.close_run(run_id)
