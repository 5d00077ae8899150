"""Request options that shape a generated parser (tools, thinking, reasoning format, ...)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from analyzer.errors import InvalidInputError

ReasoningFormat = Literal["auto", "none", "deepseek"]
ToolChoice = Literal["auto", "required", "none"]
Continuation = Literal["none", "content", "reasoning"]

REASONING_FORMATS = ("auto", "none", "deepseek")
TOOL_CHOICES = ("auto", "required", "none")
CONTINUATIONS = ("none", "content", "reasoning")


@dataclass(frozen=True)
class ParseOptions:
    """What a request asks of the model, as far as parsing its output is concerned.

    `tools_json`, `json_schema_json` and `kwargs_json` hold canonical JSON so the options
    are hashable (generated parsers are cached per template and options).
    """

    tools_json: str = "[]"
    enable_thinking: bool | None = None  # None: the template's default
    reasoning_format: ReasoningFormat = "auto"  # "none" leaves reasoning in content
    parallel_tool_calls: bool = False
    tool_choice: ToolChoice = "auto"
    json_schema_json: str = "null"  # a response-format schema: content must be that JSON
    continue_final_message: Continuation = "none"
    kwargs_json: str = "{}"  # chat_template_kwargs

    @classmethod
    def make(
        cls,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        enable_thinking: bool | None = None,
        reasoning_format: str = "auto",
        parallel_tool_calls: bool = False,
        tool_choice: str = "auto",
        json_schema: Mapping[str, Any] | None = None,
        continue_final_message: str = "none",
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> ParseOptions:
        """Build options from plain values, checking each one."""
        return cls(
            tools_json=canonical(list(checked_tools(tools or []))),
            enable_thinking=enable_thinking,
            reasoning_format=checked(reasoning_format, REASONING_FORMATS, "reasoning_format"),
            parallel_tool_calls=bool(parallel_tool_calls),
            tool_choice=checked(tool_choice, TOOL_CHOICES, "tool_choice"),
            json_schema_json=canonical(dict(json_schema) if json_schema else None),
            continue_final_message=checked(continue_final_message, CONTINUATIONS,
                                           "continue_final_message"),
            kwargs_json=canonical(dict(chat_template_kwargs or {})),
        )

    @cached_property
    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI tool definitions."""
        tools: list[dict[str, Any]] = json.loads(self.tools_json)
        return tools

    @cached_property
    def json_schema(self) -> dict[str, Any] | None:
        """The response-format schema, if any."""
        schema: dict[str, Any] | None = json.loads(self.json_schema_json)
        return schema

    @cached_property
    def chat_template_kwargs(self) -> dict[str, Any]:
        """Extra template variables."""
        kwargs: dict[str, Any] = json.loads(self.kwargs_json)
        return kwargs

    @property
    def extract_reasoning(self) -> bool:
        """Tell whether reasoning goes to reasoning_content (not left in content)."""
        return self.reasoning_format != "none"

    @property
    def wants_tools(self) -> bool:
        """Tell whether the output may hold tool calls."""
        return bool(self.tools) and self.tool_choice != "none"

    def render_kwargs(self) -> dict[str, Any]:
        """Template variables these options set (enable_thinking only when given)."""
        kwargs = dict(self.chat_template_kwargs)
        if self.enable_thinking is not None:
            kwargs.setdefault("enable_thinking", self.enable_thinking)
        return kwargs


def canonical(value: Any) -> str:
    """Return value as canonical JSON (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def checked(value: str, allowed: tuple[str, ...], name: str) -> Any:
    """Return value if it is one of allowed, else raise InvalidInputError."""
    if value not in allowed:
        raise InvalidInputError(f"{name}: expected one of {', '.join(allowed)}; found {value!r}")
    return value


def checked_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the tools as plain dicts, each with a function name."""
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        raise InvalidInputError(f"tools: expected a list of tool definitions; found {tools!r}")
    plain = []
    for index, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise InvalidInputError(
                f"tools[{index}]: expected a function tool with a name; "
                f"found {json.dumps(tool)[:80]}")
        plain.append(dict(tool))
    return plain
