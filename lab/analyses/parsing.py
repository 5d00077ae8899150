"""The lab's only door into the analyzer for parsers, grammars and streaming.

The parser generator and the streaming parser land in `analyzer/` separately; until they do,
`generate` and `open_stream` report that they are unavailable and the page says so. Everything
else in the lab (views, consumer, templates) talks to this module only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from analyzer.errors import AnalyzerError

ReasoningFormat = Literal["auto", "none"]

FALLBACK_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]


@dataclass(frozen=True)
class ParserOptions:
    """What a request asks of the parser: tools, thinking, parallel calls, reasoning format."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    enable_thinking: bool | None = None
    parallel_tool_calls: bool = False
    reasoning_format: ReasoningFormat = "auto"

    def as_dict(self) -> dict[str, Any]:
        return {
            "tools": self.tools,
            "enable_thinking": self.enable_thinking,
            "parallel_tool_calls": self.parallel_tool_calls,
            "reasoning_format": self.reasoning_format,
        }


@dataclass(frozen=True)
class GeneratedParser:
    """The readable PEG rules and GBNF grammar for one analysis and options, or why not."""

    available: bool
    peg: str = ""
    gbnf: str = ""
    triggers: tuple[str, ...] = ()
    preserved_tokens: tuple[str, ...] = ()
    problem: str = ""  # why nothing could be generated


@dataclass(frozen=True)
class ToolCallState:
    name: str
    arguments: str  # as streamed so far; pretty-printed once it is complete JSON
    id: str = ""


@dataclass(frozen=True)
class ParseProblem:
    message: str
    offset: int
    context: str  # the failing line with a caret line under it


@dataclass(frozen=True)
class LiveState:
    """What the streaming parser has made of the text so far."""

    reasoning: str = ""
    content: str = ""
    tool_calls: tuple[ToolCallState, ...] = ()
    delta_count: int = 0
    problem: ParseProblem | None = None


class LiveParser:
    """Feed text as it arrives; each call returns the message parsed so far.

    `finish` parses the text as complete (what is held back while streaming, like a trailing
    `</thi`, is settled); typing after that restarts the stream over the whole text.
    """

    def __init__(self, new_stream: Callable[[], Any]) -> None:
        self._new_stream = new_stream
        self._stream = new_stream()
        self._finished = False
        self._delta_count = 0
        self.text = ""
        self.problem: ParseProblem | None = None

    def feed(self, chunk: str) -> LiveState:
        if self._finished:
            self._restart()
            chunk, self.text = self.text + chunk, ""
        self.text += chunk
        if self.problem is None:
            self._run(lambda: self._stream.feed(chunk))
        return self.state()

    def finish(self) -> LiveState:
        if not self._finished and self.problem is None:
            self._run(self._stream.finish)
            self._finished = True
        return self.state()

    def _restart(self) -> None:
        self._stream = self._new_stream()
        self._finished = False
        self._delta_count = 0
        self.problem = None

    def _run(self, step: Callable[[], list[Any]]) -> None:
        try:
            self._delta_count += len(step())
        except AnalyzerError as exc:
            self.problem = ParseProblem(
                message=str(exc).splitlines()[0],
                offset=int(getattr(exc, "offset", len(self.text))),
                context=str(getattr(exc, "context", "")),
            )

    def state(self) -> LiveState:
        message = self._stream.message()
        calls = tuple(ToolCallState(c.name, c.arguments, c.id) for c in message.tool_calls)
        return LiveState(
            reasoning=message.reasoning_content,
            content=message.content,
            tool_calls=calls,
            delta_count=self._delta_count,
            problem=self.problem,
        )


NOT_YET = (
    "The parser generator has not landed in the analyzer yet; this panel fills in once it does."
)
STREAM_NOT_YET = (
    "The streaming parser has not landed in the analyzer yet; live parsing starts once it does."
)


def options_from_result(result: dict[str, Any]) -> ParserOptions:
    """Default options: the tools the analysis itself rendered with, so the sample parses."""
    tools = _probe_tools(result) or FALLBACK_TOOLS
    return ParserOptions(tools=tools, parallel_tool_calls=False)


def options_from_dict(data: dict[str, Any], base: ParserOptions) -> ParserOptions:
    """Read options sent by the page, keeping `base` for anything missing or malformed."""
    tools = data.get("tools", base.tools)
    thinking = data.get("enable_thinking", base.enable_thinking)
    reasoning = data.get("reasoning_format", base.reasoning_format)
    return ParserOptions(
        tools=tools if isinstance(tools, list) else base.tools,
        enable_thinking=thinking if thinking in (None, True, False) else base.enable_thinking,
        parallel_tool_calls=bool(data.get("parallel_tool_calls", base.parallel_tool_calls)),
        reasoning_format=reasoning if reasoning in ("auto", "none") else base.reasoning_format,
    )


def _probe_tools(result: dict[str, Any]) -> list[dict[str, Any]]:
    for comparison in result.get("comparisons") or []:
        variant = comparison.get("variant_b") or {}
        try:
            params = json.loads(variant.get("params") or "{}")
        except ValueError:
            continue
        if isinstance(params, dict) and params.get("tools"):
            return list(params["tools"])
    return []


def sample_output(result: dict[str, Any]) -> str:
    """Return a model output rendered by the template itself: its tool call, if it has one."""
    for comparison in result.get("comparisons") or []:
        diff = comparison.get("diff") or {}
        if comparison.get("id") == "T1" and diff.get("right"):
            return str(diff["right"])
    return ""


def generate(result_json: str, options: ParserOptions) -> GeneratedParser:
    """Generate the parser and grammar for an analysis under the given options."""
    return GeneratedParser(available=False, problem=NOT_YET)


def open_stream(result_json: str, options: ParserOptions) -> LiveParser | None:
    """Start a streaming parse for an analysis, or None while no streaming parser exists."""
    return None
