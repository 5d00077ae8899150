"""The corpus run's progress socket: the progress at once, then each change pushed.

Joins the run's channel-layer group (lab.corpus.notify); workers send the progress there as
they store rows, and the closing task once more when the run ends. Sending the progress right
after joining closes the race with a run that moved or ended while the page loaded.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from lab.corpus import notify

CLOSE_NOT_FOUND = 4404


class ProgressConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # Channels is untyped
    """Push a corpus run's progress to its dashboard."""

    async def connect(self) -> None:
        self.run_id = int(self.scope["url_route"]["kwargs"]["run_id"])
        self.group = notify.group_name(self.run_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        message = await database_sync_to_async(notify.progress)(self.run_id)
        if message is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.send_json(message)

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        pass  # the page only listens

    async def run_progress(self, event: dict[str, Any]) -> None:
        """A worker announced the run's progress (group message type `run.progress`)."""
        await self.send_json(event["message"])
