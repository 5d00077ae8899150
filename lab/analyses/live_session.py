"""One live textbox connection: client messages in, the replies to send out.

Every client frame gets a reply: the parse's change (`replies.reply_for`), `unavailable` when
the options give no parser, or a typed `error` that leaves the parse as it was. No I/O here:
the consumer decodes frames and sends what `receive_text` returns.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from lab import untrusted_json
from lab.analyses import parsing
from lab.analyses.messages import (
    AppendMessage,
    ErrorCode,
    FinishMessage,
    OptionsMessage,
    ResetMessage,
    ResumeMessage,
    ServerMessage,
    StateMessage,
    UnavailableMessage,
    error_message,
    state_message,
)
from lab.analyses.replies import reply_for

# The fields each client message must carry, with their JSON types.
FIELDS: dict[str, dict[str, type]] = {
    "append": {"chunk": str},
    "reset": {"text": str},
    "options": {"options": dict, "text": str},
    "finish": {},
    "resume": {"options": dict, "text": str, "received": int, "finished": bool},
}
JSON_TYPES = {str: "a string", dict: "an object", int: "an integer", bool: "true or false"}


class LiveSession:
    """The parse of one connection's text under its options, and what the page shows of it."""

    def __init__(self, result_json: str, options: parsing.ParserOptions) -> None:
        self.result_json = result_json
        self.options = options
        self.parser: parsing.LiveParser | None = None
        self.shown: StateMessage | None = None  # what the page shows: replies are its changes

    def start(self) -> ServerMessage:
        """Open the parse of an empty box: the greeting."""
        return self._restart("")

    def receive_text(self, text: str | None) -> ServerMessage:
        """Answer one frame (None: a binary frame)."""
        if text is None:
            return _refused("binary_frame", "binary frames are not read: send JSON as a text frame")
        try:
            content = untrusted_json.loads(text)
        except ValueError as exc:
            return _refused("not_json", f"the frame is not JSON ({exc})")
        return self.receive(content)

    def receive(self, content: Any) -> ServerMessage:
        """Answer one decoded message; one handler per message type."""
        if not isinstance(content, dict):
            return _refused("not_an_object", f"a message is a JSON object; found {_kind(content)}")
        kind = content.get("type")
        if kind not in FIELDS:
            return _refused("unknown_type", f"unknown message type {kind!r}")
        problem = field_problem(str(kind), content)
        if problem:
            return _refused("bad_field", problem)
        reply: ServerMessage = getattr(self, f"on_{kind}")(content)
        return reply

    def on_append(self, message: AppendMessage) -> ServerMessage:
        if self.parser is None:
            return _unavailable()
        length = len(self.parser.text) + len(message["chunk"])
        return self._over_cap(length, "this append") or self._reply(
            self.parser.feed(message["chunk"]))

    def on_finish(self, message: FinishMessage) -> ServerMessage:
        return _unavailable() if self.parser is None else self._reply(self.parser.finish())

    def on_reset(self, message: ResetMessage) -> ServerMessage:
        return self._over_cap(len(message["text"]), "the text") or self._restart(message["text"])

    def on_options(self, message: OptionsMessage) -> ServerMessage:
        refusal = self._over_cap(len(message["text"]), "the text")
        if refusal:
            return refusal
        self.options = parsing.options_from_dict(message["options"], self.options)
        return self._restart(message["text"])

    def on_resume(self, message: ResumeMessage) -> ServerMessage:
        text, received = message["text"], message["received"]
        if not 0 <= received <= len(text):
            return _refused("bad_field", f"`received` must be 0 to {len(text)}; found {received}")
        refusal = self._over_cap(len(text), "the text")
        if refusal:
            return refusal
        self.options = parsing.options_from_dict(message["options"], self.options)
        return self._resume(text, received, message["finished"])

    def _resume(self, text: str, received: int, finished: bool) -> ServerMessage:
        """Parse the text, counting what the page already shows as sent."""
        self.parser = parsing.open_stream(self.result_json, self.options)
        if self.parser is None:
            return _unavailable()
        shown = self.parser.feed(text[:received])
        self.shown = state_message(self.parser.finish() if finished else shown)
        return self._reply(self.parser.feed(text[received:]))

    def _restart(self, text: str) -> ServerMessage:
        self.parser = parsing.open_stream(self.result_json, self.options)
        self.shown = None
        return _unavailable() if self.parser is None else self._reply(self.parser.feed(text))

    def _reply(self, state: parsing.LiveState) -> ServerMessage:
        now = state_message(state)
        reply = reply_for(self.shown, now)
        self.shown = now
        return reply

    def _over_cap(self, length: int, what: str) -> ServerMessage | None:
        cap = settings.LAB_LIVE_MAX_CHARS
        if length <= cap:
            return None
        return _refused(
            "text_too_long",
            f"the live box parses at most {cap:,} characters; {what} would make it"
            f" {length:,}. Nothing changed: shorten the text.",
        )


def field_problem(kind: str, content: dict[str, Any]) -> str:
    """Say which field of a client message is missing or of the wrong type, or return ""."""
    for name, expected in FIELDS[kind].items():
        value = content.get(name)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            return f"`{kind}` needs `{name}` as {JSON_TYPES[expected]}; found {_kind(value)}"
    return ""


def _kind(value: Any) -> str:
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _unavailable() -> UnavailableMessage:
    return UnavailableMessage(type="unavailable", reason=parsing.STREAM_UNAVAILABLE)


def _refused(code: ErrorCode, message: str) -> ServerMessage:
    return error_message(code, message)
