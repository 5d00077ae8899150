"""Let a submission wait a moment for its analysis, so a quick one lands on its result page.

Most analyses end within a few tens of milliseconds of being sent. Redirecting at once to the
pending page costs a page load and a status socket that race the worker for the machine's cores,
then a second page load when the status is pushed. The submitting request instead joins the
analysis' channel-layer group (the same pushes the status socket gets, lab.analyses.notify) and
redirects when the analysis ends or `seconds` pass, whichever is first; a slow analysis still
gets the pending page, only that much later.
"""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from lab.analyses import notify
from lab.analyses.models import Analysis

log = logging.getLogger(__name__)

PENDING = (Analysis.Status.QUEUED, Analysis.Status.RUNNING)


def wait_briefly(analysis_id: int, seconds: float) -> bool:
    """Wait up to `seconds` for the analysis to end; tell whether it has.

    An analysis whose task the broker did not take is not waited for: nothing runs it yet.
    """
    if seconds <= 0 or not _is_sent(analysis_id):
        return False
    try:
        return bool(async_to_sync(_wait)(analysis_id, seconds))
    except Exception:  # noqa: BLE001 - a broken channel layer only costs the shortcut
        log.warning("analysis %s: could not wait for its end", analysis_id, exc_info=True)
        return False


async def _wait(analysis_id: int, seconds: float) -> bool:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = notify.group_name(analysis_id)
    await layer.group_add(group, channel)
    try:
        # Read after joining: an end pushed before the join is seen here, one after it below.
        if await database_sync_to_async(_has_ended)(analysis_id):
            return True
        async with asyncio.timeout(seconds):
            while True:
                event = await layer.receive(channel)
                if event.get("message", {}).get("status") not in PENDING:
                    return True
    except TimeoutError:
        return False
    finally:
        await layer.group_discard(group, channel)


def _is_sent(analysis_id: int) -> bool:
    return Analysis.objects.filter(pk=analysis_id, enqueued_at__isnull=False).exists()


def _has_ended(analysis_id: int) -> bool:
    status = Analysis.objects.filter(pk=analysis_id).values_list("status", flat=True).first()
    return status not in PENDING
