"""The live textbox's websocket: model output in, parsed message out (see live_session).

Asynchronous: parsing one keystroke takes well under a millisecond, less than a hop to a
thread would, so frames are answered on the event loop; only loading the analysis row goes
to a thread.
"""

from __future__ import annotations

import json
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from lab.analyses import samples
from lab.analyses.live_session import LiveSession
from lab.analyses.messages import ServerMessage
from lab.analyses.models import Analysis
from lab.pushes import CLOSE_NOT_FOUND


class LiveParseConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]  # Channels is untyped
    """Stream text through the analysis' parser: every frame gets one reply."""

    # A socket that only answers its own frames needs no channel layer: an alias that names
    # none makes Channels skip it (no Redis read per connection, nothing to time out).
    channel_layer_alias = "live-parse-has-no-channel-layer"

    async def connect(self) -> None:
        analysis_id = self.scope["url_route"]["kwargs"]["analysis_id"]
        self.session = await database_sync_to_async(open_session)(analysis_id)
        await self.accept()
        if self.session is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.send_message(self.session.start())

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.session is not None:
            await self.send_message(self.session.receive_text(text_data))

    async def send_message(self, message: ServerMessage) -> None:
        await self.send(text_data=json.dumps(message, ensure_ascii=False))


def open_session(analysis_id: Any) -> LiveSession | None:
    """Start a session on a finished analysis, with its sample's options; None if none."""
    analysis = (
        Analysis.objects.filter(pk=analysis_id, status=Analysis.Status.DONE)
        .select_related("template")
        .first()
    )
    if analysis is None:
        return None
    return LiveSession(analysis.result_json, samples.sample_for(analysis).options())
