"""Websocket messages of the live textbox, both directions, typed by their `type` field."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from lab.analyses.parsing import LiveState


class AppendMessage(TypedDict):
    """Client: text typed or streamed at the end of the box."""

    type: Literal["append"]
    chunk: str


class ResetMessage(TypedDict):
    """Client: the box changed other than at its end; parse this text from scratch."""

    type: Literal["reset"]
    text: str


class OptionsMessage(TypedDict):
    """Client: parse with these request options from now on (restarts the parse)."""

    type: Literal["options"]
    options: dict[str, Any]
    text: str


class FinishMessage(TypedDict):
    """Client: the text is complete for now (typing paused); settle what streaming held back."""

    type: Literal["finish"]


class ResumeMessage(TypedDict):
    """Client, on a new socket: the box's text and options, and what of it the page shows.

    The page shows the state of `text[:received]` (settled if `finished`); the reply brings
    only what the rest of the text changes.
    """

    type: Literal["resume"]
    options: dict[str, Any]
    text: str
    received: int
    finished: bool


ClientMessage = AppendMessage | ResetMessage | OptionsMessage | FinishMessage | ResumeMessage


class ToolCallPayload(TypedDict):
    name: str
    arguments: str
    id: str


class ProblemPayload(TypedDict):
    message: str
    offset: int
    line: int
    column: int
    context: str  # the failing line with a caret line under it
    kept: str  # the marker kept as text; "" when the parse stopped here


class DeviationPayload(TypedDict):
    kind: str
    action: str  # accepted, kept_as_content or dropped
    message: str
    offset: int
    line: int
    column: int
    context: str  # the output's line with a caret line under it


class StateMessage(TypedDict):
    """Server: the whole message parsed so far (after a reset, options, or a change that does
    not extend what the page has)."""

    type: Literal["state"]
    reasoning: str
    content: str
    tool_calls: list[ToolCallPayload]
    delta_count: int
    problems: list[ProblemPayload]
    deviations: list[DeviationPayload]
    received: int  # characters of the box's text this state is of
    finished: bool


class ToolCallChange(TypedDict):
    """One tool call's change: `arguments` is appended; name and id come when they change."""

    index: int
    arguments: str
    name: NotRequired[str]
    id: NotRequired[str]


class DeltaMessage(TypedDict):
    """Server: what changed since the last reply. Text fields are appended to what the page
    has; any other field, when present, replaces it. Absent fields did not change."""

    type: Literal["delta"]
    received: int
    finished: bool
    delta_count: int
    reasoning: NotRequired[str]
    content: NotRequired[str]
    tool_calls: NotRequired[list[ToolCallChange]]
    problems: NotRequired[list[ProblemPayload]]
    deviations: NotRequired[list[DeviationPayload]]


class UnavailableMessage(TypedDict):
    """Server: this analysis cannot be streamed (yet), and why (sent for every message then)."""

    type: Literal["unavailable"]
    reason: str


ErrorCode = Literal[
    "binary_frame", "not_json", "not_an_object", "unknown_type", "bad_field", "text_too_long"
]


class ErrorMessage(TypedDict):
    """Server: the last client message could not be handled (nothing changed); why."""

    type: Literal["error"]
    code: ErrorCode
    message: str


ServerMessage = StateMessage | DeltaMessage | UnavailableMessage | ErrorMessage


def error_message(code: ErrorCode, message: str) -> ErrorMessage:
    """Build the typed error reply for a client message that was refused."""
    return {"type": "error", "code": code, "message": message}


def state_message(state: LiveState) -> StateMessage:
    """Describe a parse state for the page."""
    return {
        "type": "state",
        "reasoning": state.reasoning,
        "content": state.content,
        "tool_calls": [
            {"name": c.name, "arguments": c.arguments, "id": c.id} for c in state.tool_calls
        ],
        "delta_count": state.delta_count,
        "problems": [
            {
                "message": p.message,
                "offset": p.offset,
                "line": p.line,
                "column": p.column,
                "context": p.context,
                "kept": p.kept,
            }
            for p in state.problems
        ],
        "deviations": [
            {
                "kind": d.kind,
                "action": d.action,
                "message": d.message,
                "offset": d.offset,
                "line": d.line,
                "column": d.column,
                "context": d.context,
            }
            for d in state.deviations
        ],
        "received": state.received,
        "finished": state.finished,
    }
