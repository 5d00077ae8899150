"""Sockets that watch one row over the channel layer: its state at once, then each change pushed.

A page's socket joins the row's group and gets the row's state right away (closing the race
with a change made while the page loaded); whoever changes the row sends the new state to the
group with `push`, so the page needs no polling. The analysis status socket and the corpus run
progress socket are the two watchers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)

CLOSE_NOT_FOUND = 4404
PUSH_EVENT = "watched.push"  # handled by WatchConsumer.watched_push


def push(group: str, message: Mapping[str, object], what: str) -> None:
    """Send `message` to the sockets in `group`; a broken layer only costs the push (the
    page reads the state again when it reconnects)."""
    try:
        async_to_sync(get_channel_layer().group_send)(
            group, {"type": PUSH_EVENT, "message": dict(message)}
        )
    except Exception:  # noqa: BLE001 - see the docstring
        log.warning("could not push %s", what, exc_info=True)


class WatchConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # Channels is untyped
    """Send a row's state on connect and every pushed change after it (close 4404 if the row
    does not exist). Subclasses name the URL's key, the group and the state's query."""

    url_key = ""  # the URL route's keyword holding the row's id
    group_for: Callable[[int], str]  # the row's group
    # The row's state now, None if absent (run in a thread: it queries the database).
    state: Callable[[int], Mapping[str, object] | None]

    async def connect(self) -> None:
        key = int(self.scope["url_route"]["kwargs"][self.url_key])
        self.group = self.group_for(key)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        message = await database_sync_to_async(self.state)(key)
        if message is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.send_json(dict(message))

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        pass  # the page only listens

    async def watched_push(self, event: dict[str, Any]) -> None:
        """A change was pushed to the group (group message type PUSH_EVENT)."""
        await self.send_json(event["message"])
