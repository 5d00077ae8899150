"""The analysis page's status socket: the current status at once, then each change pushed.

Joins the analysis' channel-layer group (lab.analyses.notify); the worker that stores the outcome
sends the new status there. Sending the status right after joining closes the race with a task
that ended while the page loaded.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from lab.analyses import notify
from lab.analyses.models import Analysis

CLOSE_NOT_FOUND = 4404


def current_status(analysis_id: int) -> str | None:
    """The analysis' status, or None if there is no such analysis."""
    return Analysis.objects.filter(pk=analysis_id).values_list("status", flat=True).first()


class StatusConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # Channels is untyped
    """Push an analysis' status changes to its page."""

    async def connect(self) -> None:
        self.analysis_id = int(self.scope["url_route"]["kwargs"]["analysis_id"])
        self.group = notify.group_name(self.analysis_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        status = await database_sync_to_async(current_status)(self.analysis_id)
        if status is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.send_json(notify.StatusMessage(type="status", status=status))

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        pass  # the page only listens

    async def analysis_status(self, event: dict[str, Any]) -> None:
        """A worker announced a new status (group message type `analysis.status`)."""
        await self.send_json(event["message"])
