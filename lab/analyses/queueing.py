"""Hand analyses to the broker, and survive a broker that is down.

A row whose task could not be sent stays `queued` with no `enqueued_at`: its page says it starts
when the broker is back, and the reconciler (lab.analyses.reconcile) sends it then.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from lab.analyses.models import Analysis

log = logging.getLogger(__name__)


def enqueue(analysis_id: int) -> bool:
    """Send the analysis' task to a worker; tell whether the broker took it."""
    from lab.analyses.tasks import run_analysis  # tasks import this module's callers

    sent_at = timezone.now()
    try:
        run_analysis.delay(analysis_id)
    except Exception:  # noqa: BLE001 - kombu and redis-py raise many kinds; any means "not sent"
        log.warning("analysis %s: the broker is unreachable; it waits", analysis_id, exc_info=True)
        return False
    # Filtered on status: an eager run (tests) has already finished it.
    Analysis.objects.filter(pk=analysis_id).update(enqueued_at=sent_at)
    return True
