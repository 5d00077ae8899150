"""Tell the pages watching an analysis that its status changed, over the channel layer.

The analysis page's status socket (lab.analyses.status) joins the analysis' group; a worker that
stores an outcome sends the new status there, so the page needs no polling.
"""

from __future__ import annotations

import logging
from typing import Literal, TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from lab.analyses.models import Analysis

log = logging.getLogger(__name__)


class StatusMessage(TypedDict):
    """Server: the analysis is now in this status (the page fetches its body when it ends)."""

    type: Literal["status"]
    status: str


def group_name(analysis_id: int) -> str:
    """The channel-layer group of the pages watching this analysis."""
    return f"analysis-{analysis_id}"


def announce(analysis_id: int) -> None:
    """Send the analysis' current status to its group; a broken layer only costs the push."""
    status = Analysis.objects.filter(pk=analysis_id).values_list("status", flat=True).first()
    if status is None:
        return
    message = StatusMessage(type="status", status=status)
    try:
        async_to_sync(get_channel_layer().group_send)(
            group_name(analysis_id), {"type": "analysis.status", "message": message}
        )
    except Exception:  # noqa: BLE001 - the page's fallback poll still learns the outcome
        log.warning("could not announce analysis %s's status", analysis_id, exc_info=True)
