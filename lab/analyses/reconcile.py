"""Bring back analyses whose task was lost: never sent, dropped by the broker, or whose worker died.

Run by Celery beat every LAB_RECONCILE_SECONDS and when a worker starts; a re-submitted template
whose analysis is stuck goes through `revive` too. Sending a task twice is harmless: only one
delivery can claim the row (lab.analyses.claims).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from lab.analyses import claims, notify, queueing
from lab.analyses.models import Analysis


@dataclass(frozen=True)
class Reconciled:
    """What one pass did, by analysis id."""

    resent: tuple[int, ...]
    failed: tuple[int, ...]


def stale_queued() -> Q:
    """Queued rows never sent, or sent long enough ago that the message must be lost."""
    sent_before = timezone.now() - timedelta(seconds=settings.LAB_QUEUED_STALE_SECONDS)
    return Q(status=Analysis.Status.QUEUED) & (
        Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=sent_before)
    )


def expired_running() -> Q:
    """Running rows whose lease ran out: the worker that held them died."""
    return Q(status=Analysis.Status.RUNNING, lease_until__lt=timezone.now())


def reconcile_analyses() -> Reconciled:
    """Re-send every stale queued row and recover every expired running one."""
    resent: list[int] = []
    failed: list[int] = []
    for analysis in Analysis.objects.filter(stale_queued() | expired_running()).order_by("pk"):
        (resent if revive(analysis) else failed).append(analysis.pk)
    return Reconciled(tuple(resent), tuple(failed))


def revive(analysis: Analysis) -> bool:
    """Send a stuck row's task again, or fail it if its workers kept dying; True if re-sent."""
    if analysis.attempts >= settings.LAB_MAX_ATTEMPTS:
        if claims.finish(
            analysis.pk, analysis.claimed_by, error=claims.too_many_attempts(analysis.attempts)
        ):
            notify.announce(analysis.pk)
        return False
    queueing.enqueue(analysis.pk)
    return True


def is_stuck(analysis: Analysis) -> bool:
    """Whether the reconciler would act on this row now."""
    return Analysis.objects.filter(stale_queued() | expired_running(), pk=analysis.pk).exists()
