"""Celery tasks: take an id, claim the row, call the analyzer once, store the outcome."""

from __future__ import annotations

import time
from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings

from lab.analyses import claims, engine, heartbeat, notify, reconcile
from lab.analyses.models import Analysis

TIME_LIMIT = settings.LAB_ANALYSIS_TIME_LIMIT


class AnalysisTask(Task):  # type: ignore[misc]  # Celery ships no type hints
    """Fail the row when the hard time limit kills the process running it."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        # Runs in the worker's main process: the pool child that held the row is gone.
        if isinstance(exc, TimeLimitExceeded) and args:
            message = (
                f"the analysis took longer than {TIME_LIMIT + 10} s (hard time limit) "
                f"and its worker process was killed"
            )
            if claims.finish(int(args[0]), task_id, error=message):
                notify.announce(int(args[0]))


@shared_task(  # type: ignore[untyped-decorator]  # Celery ships no type hints
    bind=True,
    base=AnalysisTask,
    soft_time_limit=TIME_LIMIT,
    time_limit=TIME_LIMIT + 10,
)
def run_analysis(self: Task, analysis_id: int) -> None:
    """Analyse the template of a queued analysis and store the result or the error."""
    task_id = str(self.request.id)
    if not claims.claim(analysis_id, task_id):  # gone, finished, or held by a live task
        notify.announce(analysis_id)  # a row failed for too many attempts says so at once
        return
    analysis = Analysis.objects.select_related("template").get(pk=analysis_id)
    started = time.perf_counter()
    with heartbeat.kept_lease(analysis_id, task_id):
        result_json, error = _analyze(analysis)
    duration_ms = (time.perf_counter() - started) * 1000
    claims.finish(
        analysis_id, task_id, result_json=result_json, error=error, duration_ms=duration_ms
    )
    notify.announce(analysis_id)


def _analyze(analysis: Analysis) -> tuple[str, str]:
    """Return (result JSON, "") or ("", the error a user reads)."""
    try:
        result_json = engine.analyze_template(analysis.template)
        oversized = _oversized(result_json)
        return ("", oversized) if oversized else (result_json, "")
    except SoftTimeLimitExceeded:
        return "", f"the analysis took longer than {TIME_LIMIT} s and was stopped"
    except engine.AnalyzerError as exc:
        return "", str(exc)
    except MemoryError:
        return "", (
            f"the analysis needed more memory than a worker may use "
            f"({settings.LAB_WORKER_MEMORY_MB} MiB) and was stopped"
        )
    except Exception as exc:  # noqa: BLE001 - any crash must reach the page, not vanish
        return "", f"internal error ({type(exc).__name__}): {exc}"


def _oversized(result_json: str) -> str:
    """Say why a result is too large to store, or return ""."""
    size, cap = len(result_json.encode("utf-8")), settings.LAB_MAX_RESULT_BYTES
    if size <= cap:
        return ""
    return f"the analysis result is {size:,} bytes of JSON; the lab stores at most {cap:,} bytes"


@shared_task(ignore_result=True)  # type: ignore[untyped-decorator]
def reconcile_analyses_task() -> None:
    """Re-send stale queued analyses and recover those whose worker died (Celery beat)."""
    reconcile.reconcile_analyses()
