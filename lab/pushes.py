"""Sockets that watch one row over the channel layer: its state at once, then each change pushed.

A page's socket joins the row's group and gets the row's state right away (closing the race
with a change made while the page loaded); whoever changes the row sends the new state to the
group with `push`, so the page needs no polling. The analysis status socket and the corpus run
progress socket are the two watchers.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)

CLOSE_NOT_FOUND = 4404
PUSH_EVENT = "watched.push"  # handled by WatchConsumer.watched_push
PUSH_TIMEOUT_SECONDS = 10.0


def push(group: str, message: Mapping[str, object], what: str) -> None:
    """Send `message` to the sockets in `group`; a broken layer only costs the push (the
    page reads the state again when it reconnects)."""
    event = {"type": PUSH_EVENT, "message": dict(message)}
    try:
        if _kept_loop_pid == os.getpid():
            _push_on_kept_loop(group, event)
        else:  # under ASGI this runs on the server's own loop and its connections
            async_to_sync(get_channel_layer().group_send)(group, event)
    except Exception:  # noqa: BLE001 - see the docstring
        log.warning("could not push %s", what, exc_info=True)


_loop_lock = threading.Lock()
_kept_loop_pid = 0
_kept_loop: asyncio.AbstractEventLoop | None = None


def keep_a_loop() -> None:
    """Push from this process through one event loop kept in a daemon thread (a Celery pool
    process: it has no event loop of its own). The channel layer keeps its Redis connections
    per event loop: async_to_sync's new loop per push connected anew each time, 7-100 ms a
    push on a loaded machine against 0.3-0.4 ms on a kept loop (measured), and the worker's
    push is what ends the submitter's wait for its analysis."""
    global _kept_loop, _kept_loop_pid
    with _loop_lock:
        if _kept_loop_pid != os.getpid():  # a forked child inherits no thread
            _kept_loop = asyncio.new_event_loop()
            threading.Thread(target=_kept_loop.run_forever, name="pushes", daemon=True).start()
            _kept_loop_pid = os.getpid()


def _push_on_kept_loop(group: str, event: dict[str, Any]) -> None:
    assert _kept_loop is not None
    send = get_channel_layer().group_send(group, event)
    sent = asyncio.run_coroutine_threadsafe(send, _kept_loop)
    try:
        sent.result(PUSH_TIMEOUT_SECONDS)
    except BaseException:
        sent.cancel()
        raise


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
