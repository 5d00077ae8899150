"""Websocket messages of the live textbox, both directions, typed by their `type` field."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

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


ClientMessage = AppendMessage | ResetMessage | OptionsMessage | FinishMessage


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
    """Server: the message parsed so far."""

    type: Literal["state"]
    reasoning: str
    content: str
    tool_calls: list[ToolCallPayload]
    delta_count: int
    problems: list[ProblemPayload]
    deviations: list[DeviationPayload]


class UnavailableMessage(TypedDict):
    """Server: this analysis cannot be streamed (yet), and why."""

    type: Literal["unavailable"]
    reason: str


class ErrorMessage(TypedDict):
    """Server: the last client message could not be handled."""

    type: Literal["error"]
    message: str


ServerMessage = StateMessage | UnavailableMessage | ErrorMessage


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
    }
