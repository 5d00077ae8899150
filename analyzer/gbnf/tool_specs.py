"""Read OpenAI tool definitions into the names and schemas a grammar needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzer.gbnf.errors import GrammarRequestError

EMPTY_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ToolSpec:
    """One callable function: its name and its parameters' JSON schema."""

    name: str
    parameters: Any

    @property
    def properties(self) -> dict[str, Any]:
        """The declared parameters, by name (empty when the schema declares none)."""
        props = self.parameters.get("properties") if isinstance(self.parameters, dict) else None
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the parameters a call must give."""
        found = self.parameters.get("required") if isinstance(self.parameters, dict) else None
        return tuple(k for k in found or () if isinstance(k, str))


def _read_tool(index: int, tool: Any) -> ToolSpec:
    function = tool.get("function", tool) if isinstance(tool, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(name, str) or not name:
        raise GrammarRequestError(
            f"tools[{index}]: expected {{'type': 'function', 'function': {{'name': ...}}}}, "
            f"found {tool!r:.80}"
        )
    parameters = function.get("parameters")
    return ToolSpec(name, dict(parameters) if isinstance(parameters, Mapping) else
                    dict(EMPTY_PARAMETERS))


def read_tools(tools: Sequence[Any] | None) -> tuple[ToolSpec, ...]:
    """Read OpenAI-style tool definitions; raise GrammarRequestError on a malformed one."""
    specs = tuple(_read_tool(i, tool) for i, tool in enumerate(tools or ()))
    names = [spec.name for spec in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise GrammarRequestError(f"tools: function names must be unique, found {duplicates}")
    return specs
