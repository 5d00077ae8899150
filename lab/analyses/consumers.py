"""The live textbox's websocket: model output in, parsed message out.

Every client frame gets a reply: the parse's change (`replies.reply_for`), `unavailable` when
the options give no parser, or a typed `error` that leaves the parse as it was.
"""

from __future__ import annotations

import json
from typing import Any

from channels.generic.websocket import JsonWebsocketConsumer
from django.conf import settings

from lab.analyses import parsing, samples
from lab.analyses.messages import (
    AppendMessage,
    ErrorCode,
    FinishMessage,
    OptionsMessage,
    ResetMessage,
    ResumeMessage,
    StateMessage,
    UnavailableMessage,
    error_message,
    state_message,
)
from lab.analyses.models import Analysis
from lab.analyses.replies import reply_for

CLOSE_NOT_FOUND = 4404

# The fields each client message must carry, with their JSON types.
FIELDS: dict[str, dict[str, type]] = {
    "append": {"chunk": str},
    "reset": {"text": str},
    "options": {"options": dict, "text": str},
    "finish": {},
    "resume": {"options": dict, "text": str, "received": int, "finished": bool},
}
JSON_TYPES = {str: "a string", dict: "an object", int: "an integer", bool: "true or false"}


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
        self.shown: StateMessage | None = None  # what the page shows: replies are its changes
        self._restart("")

    def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None:
            self._refuse("binary_frame", "binary frames are not read: send JSON as a text frame")
            return
        try:
            content = json.loads(text_data)
        except ValueError as exc:
            self._refuse("not_json", f"the frame is not JSON ({exc})")
            return
        self.receive_json(content)

    def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            found = _json_kind(content)
            self._refuse("not_an_object", f"a message is a JSON object; found {found}")
            return
        kind = content.get("type")
        handler = getattr(self, f"on_{kind}", None) if kind in FIELDS else None
        if handler is None:
            self._refuse("unknown_type", f"unknown message type {kind!r}")
            return
        problem = field_problem(str(kind), content)
        if problem:
            self._refuse("bad_field", problem)
            return
        handler(content)

    def on_append(self, message: AppendMessage) -> None:
        if self.parser is None:
            self._unavailable()
        elif self._within_cap(len(self.parser.text) + len(message["chunk"]), "this append"):
            self._reply(self.parser.feed(message["chunk"]))

    def on_finish(self, message: FinishMessage) -> None:
        if self.parser is None:
            self._unavailable()
        else:
            self._reply(self.parser.finish())

    def on_reset(self, message: ResetMessage) -> None:
        if self._within_cap(len(message["text"]), "the text"):
            self._restart(message["text"])

    def on_options(self, message: OptionsMessage) -> None:
        if self._within_cap(len(message["text"]), "the text"):
            self.options = parsing.options_from_dict(message["options"], self.options)
            self._restart(message["text"])

    def on_resume(self, message: ResumeMessage) -> None:
        text, received = message["text"], message["received"]
        if not 0 <= received <= len(text):
            self._refuse("bad_field", f"`received` must be 0 to {len(text)}; found {received}")
        elif self._within_cap(len(text), "the text"):
            self.options = parsing.options_from_dict(message["options"], self.options)
            self._resume(text, received, message["finished"])

    def _resume(self, text: str, received: int, finished: bool) -> None:
        """Parse the text, counting what the page already shows as sent."""
        self.parser = parsing.open_stream(self.result_json, self.options)
        if self.parser is None:
            self._unavailable()
            return
        shown = self.parser.feed(text[:received])
        self.shown = state_message(self.parser.finish() if finished else shown)
        self._reply(self.parser.feed(text[received:]))

    def _restart(self, text: str) -> None:
        self.parser = parsing.open_stream(self.result_json, self.options)
        self.shown = None
        if self.parser is None:
            self._unavailable()
            return
        self._reply(self.parser.feed(text))

    def _reply(self, state: parsing.LiveState) -> None:
        now = state_message(state)
        self.send_json(reply_for(self.shown, now))
        self.shown = now

    def _within_cap(self, length: int, what: str) -> bool:
        cap = settings.LAB_LIVE_MAX_CHARS
        if length > cap:
            self._refuse(
                "text_too_long",
                f"the live box parses at most {cap:,} characters; {what} would make it"
                f" {length:,}. Nothing changed: shorten the text.",
            )
        return length <= cap

    def _unavailable(self) -> None:
        self.send_json(UnavailableMessage(type="unavailable", reason=parsing.STREAM_UNAVAILABLE))

    def _refuse(self, code: ErrorCode, message: str) -> None:
        self.send_json(error_message(code, message))


def field_problem(kind: str, content: dict[str, Any]) -> str:
    """Say which field of a client message is missing or of the wrong type, or return ""."""
    for name, expected in FIELDS[kind].items():
        value = content.get(name)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            return f"`{kind}` needs `{name}` as {JSON_TYPES[expected]}; found {_json_kind(value)}"
    return ""


def _json_kind(value: Any) -> str:
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)
