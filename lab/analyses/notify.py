"""Tell the pages watching an analysis that its status changed, over the channel layer.

The analysis page's status socket (lab.analyses.status) joins the analysis' group; a worker that
stores an outcome sends the new status there (lab.pushes), so the page needs no polling.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from lab import pushes
from lab.analyses.models import Analysis


class StatusMessage(TypedDict):
    """Server: the analysis is now in this status (the page fetches its body when it ends)."""

    type: Literal["status"]
    status: str


def group_name(analysis_id: int) -> str:
    """The channel-layer group of the pages watching this analysis."""
    return f"analysis-{analysis_id}"


def status_message(analysis_id: int) -> StatusMessage | None:
    """The analysis' status now, or None if there is no such analysis."""
    status = Analysis.objects.filter(pk=analysis_id).values_list("status", flat=True).first()
    return None if status is None else StatusMessage(type="status", status=status)


def announce(analysis_id: int) -> None:
    """Send the analysis' current status to its group (never raises)."""
    message = status_message(analysis_id)
    if message is not None:
        pushes.push(group_name(analysis_id), message, f"analysis {analysis_id}'s status")
