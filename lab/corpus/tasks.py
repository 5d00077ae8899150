"""Celery tasks of a corpus run: one per template (the chord's header), one to close the run."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings

from lab.corpus import recovery, runs

TIME_LIMIT = settings.LAB_ANALYSIS_TIME_LIMIT


class EntryTask(Task):  # type: ignore[misc]  # Celery ships no type hints
    """Store an error row when the hard time limit kills the process evaluating a template."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        if isinstance(exc, TimeLimitExceeded) and len(args) == 2:
            message = f"killed after {TIME_LIMIT + 10} s (hard time limit)"
            runs.evaluate_failure(int(args[0]), int(args[1]), message)


# Results are kept (ignore_result=False): the chord counts its header's results in the backend.
@shared_task(  # type: ignore[untyped-decorator]  # Celery ships no type hints
    ignore_result=False,
    base=EntryTask,
    soft_time_limit=TIME_LIMIT,
    time_limit=TIME_LIMIT + 10,
)
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
    """Close a run once every template task has finished (unless it was closed meanwhile)."""
    runs.close_pending_run(run_id)


@shared_task(ignore_result=True)  # type: ignore[untyped-decorator]
def reconcile_runs_task() -> None:
    """Close runs whose chord can no longer close them (Celery beat)."""
    recovery.close_abandoned_runs()
