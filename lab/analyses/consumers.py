"""The live textbox's websocket: model output in, parsed message out."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import JsonWebsocketConsumer

from lab.analyses import parsing, samples
from lab.analyses.messages import (
    AppendMessage,
    ErrorMessage,
    FinishMessage,
    OptionsMessage,
    ResetMessage,
    UnavailableMessage,
    state_message,
)
from lab.analyses.models import Analysis

CLOSE_NOT_FOUND = 4404


class LiveParseConsumer(JsonWebsocketConsumer):  # type: ignore[misc]  # Channels is untyped
    """Stream text through the analysis' parser; one handler per client message type."""

    def connect(self) -> None:
        analysis_id = self.scope["url_route"]["kwargs"]["analysis_id"]
        analysis = (
            Analysis.objects.filter(pk=analysis_id, status=Analysis.Status.DONE)
            .select_related("template")
            .first()
        )
        self.accept()
        if analysis is None:
            self.close(code=CLOSE_NOT_FOUND)
            return
        self.result_json = analysis.result_json
        self.options = samples.sample_for(analysis).options()
        self.parser: parsing.LiveParser | None = None
        self._restart("")

    def receive_json(self, content: Any, **kwargs: Any) -> None:
        handlers = {
            "append": self.on_append,
            "reset": self.on_reset,
            "options": self.on_options,
            "finish": self.on_finish,
        }
        kind = content.get("type") if isinstance(content, dict) else None
        handler = handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            self.send_json(ErrorMessage(type="error", message=f"unknown message type {kind!r}"))
            return
        handler(content)  # type: ignore[operator]

    def on_append(self, message: AppendMessage) -> None:
        if self.parser is not None:
            self.send_json(state_message(self.parser.feed(str(message.get("chunk", "")))))

    def on_finish(self, message: FinishMessage) -> None:
        if self.parser is not None:
            self.send_json(state_message(self.parser.finish()))

    def on_reset(self, message: ResetMessage) -> None:
        self._restart(str(message.get("text", "")))

    def on_options(self, message: OptionsMessage) -> None:
        self.options = parsing.options_from_dict(message.get("options") or {}, self.options)
        self._restart(str(message.get("text", "")))

    def _restart(self, text: str) -> None:
        self.parser = parsing.open_stream(self.result_json, self.options)
        if self.parser is None:
            self.send_json(
                UnavailableMessage(type="unavailable", reason=parsing.STREAM_UNAVAILABLE)
            )
            return
        self.send_json(state_message(self.parser.feed(text)))
