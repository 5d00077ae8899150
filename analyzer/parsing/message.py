"""The OpenAI-compatible assistant message a parse produces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One function call; arguments is a JSON text (possibly unfinished in a partial parse)."""

    name: str
    arguments: str
    id: str = ""

    @classmethod
    def of(cls, name: str, arguments: str, id: str) -> ToolCall:
        """Build a call as __init__ does, without a call to object.__setattr__ per field (a
        frozen dataclass's __init__ makes three; a parse builds one call per tool call)."""
        call = object.__new__(cls)
        call.__dict__.update(name=name, arguments=arguments, id=id)
        return call

    @classmethod
    def all_of(cls, fields: list[tuple[str, str, str]]) -> tuple[ToolCall, ...]:
        """Build a call from each (name, arguments, id) as of() does, in one frame (a whole
        parse builds them all at once)."""
        new = object.__new__
        calls = []
        for name, arguments, id in fields:
            call = new(cls)
            call.__dict__.update(name=name, arguments=arguments, id=id)
            calls.append(call)
        return tuple(calls)

    def to_dict(self) -> dict[str, Any]:
        """Return the OpenAI form."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Message:
    """An assistant message split into reasoning, content and tool calls."""

    content: str = ""
    reasoning_content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    role: str = "assistant"

    @classmethod
    def of(cls, content: str, reasoning_content: str, tool_calls: tuple[ToolCall, ...]) -> Message:
        """Build a message as __init__ does, without a call to object.__setattr__ per field
        (a whole parse builds one per output)."""
        message = object.__new__(cls)
        message.__dict__.update(content=content, reasoning_content=reasoning_content,
                                tool_calls=tool_calls, role="assistant")
        return message

    def to_dict(self) -> dict[str, Any]:
        """Return the OpenAI form."""
        return {
            "role": self.role,
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
        }
