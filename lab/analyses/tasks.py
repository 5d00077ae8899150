"""Celery tasks: take an id, re-fetch the row, call the analyzer once, store the outcome."""

from __future__ import annotations

import time

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from lab.analyses import engine
from lab.analyses.models import Analysis


@shared_task(  # type: ignore[untyped-decorator]  # Celery ships no type hints
    soft_time_limit=settings.LAB_ANALYSIS_TIME_LIMIT,
    time_limit=settings.LAB_ANALYSIS_TIME_LIMIT + 10,
)
def run_analysis(analysis_id: int) -> None:
    """Analyse the template of a queued analysis and store the result or the error."""
    claimed = Analysis.objects.filter(pk=analysis_id, status=Analysis.Status.QUEUED).update(
        status=Analysis.Status.RUNNING, started_at=timezone.now()
    )
    if not claimed:  # gone, or another worker already took it
        return
    analysis = Analysis.objects.select_related("template").get(pk=analysis_id)
    started = time.perf_counter()
    try:
        result_json = engine.analyze_template(analysis.template)
    except SoftTimeLimitExceeded:
        _finish(
            analysis,
            started,
            error=f"the analysis took longer than "
            f"{settings.LAB_ANALYSIS_TIME_LIMIT} s and was stopped",
        )
    except engine.AnalyzerError as exc:
        _finish(analysis, started, error=str(exc))
    except MemoryError:
        _finish(
            analysis,
            started,
            error=f"the analysis needed more memory than a worker may use "
            f"({settings.LAB_WORKER_MEMORY_MB} MiB) and was stopped",
        )
    except Exception as exc:  # noqa: BLE001 - any crash must reach the page, not vanish
        _finish(analysis, started, error=f"internal error ({type(exc).__name__}): {exc}")
    else:
        _finish(analysis, started, result_json=result_json, error=_oversized(result_json))


def _oversized(result_json: str) -> str:
    """Say why a result is too large to store, or return ""."""
    size, cap = len(result_json.encode("utf-8")), settings.LAB_MAX_RESULT_BYTES
    if size <= cap:
        return ""
    return f"the analysis result is {size:,} bytes of JSON; the lab stores at most {cap:,} bytes"


def _finish(analysis: Analysis, started: float, *, result_json: str = "", error: str = "") -> None:
    analysis.duration_ms = (time.perf_counter() - started) * 1000
    analysis.finished_at = timezone.now()
    analysis.result_json = "" if error else result_json
    analysis.error = error
    analysis.status = Analysis.Status.FAILED if error else Analysis.Status.DONE
    analysis.save(update_fields=["duration_ms", "finished_at", "result_json", "error", "status"])
