"""The tool-call format as a structural tag: the text before and after each call's JSON arguments.

SGLang and vLLM accept `{"type": "structural_tag", "structures": [{"begin", "schema", "end"}],
"triggers": [...]}`: once the model writes a trigger, the text must go on as one structure's
`begin`, then JSON matching its `schema`, then its `end`. The begin and end are read off the
template's own render of a probe call (so they carry its exact whitespace), and the tag is
checked with llguidance against the template's render of a real call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzer.analysis.playground import RenderRequest, render_conversation
from analyzer.errors import AnalyzerError
from analyzer.gbnf.check import GrammarMatch, match_lark
from analyzer.model import Analysis, ToolFormat
from analyzer.render.loading import TemplateSource

PROBE_NAME = "zq_probe_function"
PROBE_KEY = "zq_probe_key"
PROBE_VALUE = "ZQ_PROBE_VALUE"
PROBE_ID = "call12345"  # nine alphanumerics: Mistral's templates refuse other id shapes
PROBE_TOOL = {"type": "function", "function": {
    "name": PROBE_NAME, "description": "A probe", "parameters": {
        "type": "object", "properties": {PROBE_KEY: {"type": "string", "description": "A key"}},
        "required": [PROBE_KEY]}}}
EXAMPLE_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
EXAMPLE_ARGUMENTS = {"city": "Paris"}


@dataclass(frozen=True)
class Structure:
    """One tool's call: `begin`, then JSON arguments matching `schema`, then `end`."""

    begin: str
    schema: str  # the tool's parameters, as JSON text
    end: str


@dataclass(frozen=True)
class StructuralTag:
    """A structural tag for a request's tools, or why the template's calls cannot be one."""

    structures: tuple[Structure, ...]
    triggers: tuple[str, ...]
    problem: str = ""  # set when no structural tag describes the calls
    note: str = ""  # a limit of the tag (e.g. a call id it has to fix)

    @property
    def available(self) -> bool:
        return not self.problem

    def to_dict(self) -> dict[str, Any]:
        """The response_format object SGLang and vLLM accept."""
        return {"type": "structural_tag", "triggers": list(self.triggers),
                "structures": [{"begin": s.begin, "schema": json.loads(s.schema), "end": s.end}
                               for s in self.structures]}

    def lark(self) -> str:
        """The tag as a Lark grammar for llguidance: one call, any of the structures."""
        choices = " | ".join(f"{json.dumps(s.begin)} %json{s.schema} {json.dumps(s.end)}"
                             for s in self.structures)
        return f"start: {choices}\n"


def unavailable(problem: str) -> StructuralTag:
    return StructuralTag((), (), problem)


def structural_tag(template: TemplateSource, analysis: Analysis,
                   tools: Sequence[Mapping[str, Any]] = (EXAMPLE_TOOL,)) -> StructuralTag:
    """Build the structural tag of the template's calls for these tools."""
    mode = analysis.tools.format.mode
    if mode not in (ToolFormat.JSON_NATIVE, ToolFormat.TAG_WITH_JSON):
        return unavailable(f"the template writes {mode.value} calls, not JSON arguments: a "
                           "structural tag's JSON schema cannot describe them (use the GBNF "
                           "grammar instead)")
    trigger = first_marker(analysis)
    if not trigger:
        return unavailable("no marker opens a call, so there is no trigger to start a "
                           "structural tag on")
    try:
        call = call_text(template, PROBE_TOOL, {PROBE_KEY: PROBE_VALUE}, analysis)
    except AnalyzerError as exc:
        return unavailable(f"the template did not render a probe call: {exc}")
    return from_probe(call, trigger, tools)


def from_probe(call: str, trigger: str,
               tools: Sequence[Mapping[str, Any]]) -> StructuralTag:
    """Cut the probe call around its arguments and put each tool's name in the begin."""
    span = arguments_span(call)
    if span is None:
        return unavailable("the probe call's arguments are not written as one JSON object")
    begin, end = call[: span[0]], call[span[1] :]
    if begin.count(PROBE_NAME) != 1 or PROBE_NAME in end:
        return unavailable("the function name is not written once before the arguments")
    structures = tuple(
        Structure(begin.replace(PROBE_NAME, tool_name(tool)), json.dumps(tool_schema(tool)), end)
        for tool in tools)
    note = "" if PROBE_ID not in begin + end else (
        f"the template writes the call id inside the call; a structural tag has no slot for "
        f"it, so this one fixes it to {PROBE_ID!r}")
    return StructuralTag(structures, (trigger,), note=note)


def first_marker(analysis: Analysis) -> str:
    """The text that opens the calls: the section's start, else each call's start."""
    f = analysis.tools.format
    return (f.section_start or f.per_call_start).strip()


def last_marker(analysis: Analysis) -> str:
    f = analysis.tools.format
    return (f.section_end or f.per_call_end or analysis.tools.function.close).strip()


def call_text(template: TemplateSource, tool: Mapping[str, Any], arguments: dict[str, Any],
              analysis: Analysis) -> str:
    """Render one call and cut it from its first marker to its last (or to the turn's end)."""
    call = {"id": PROBE_ID, "type": "function",
            "function": {"name": tool_name(tool), "arguments": arguments}}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."},
                {"role": "assistant", "content": "", "tool_calls": [call]}]
    rendered = render_conversation(template, RenderRequest.make(
        messages, tools=[tool], add_generation_prompt=False)).prompt
    start = rendered.rfind(first_marker(analysis))
    closing = last_marker(analysis)
    end = rendered.find(closing, start) + len(closing) if closing else -1
    if start < 0 or (closing and end < len(closing)):
        raise AnalyzerError("the call's markers are not in the render")
    return rendered[start:end] if closing else rendered[start:]


def arguments_span(call: str) -> tuple[int, int] | None:
    """Find the JSON object holding the probe argument: (start, end) in the call text."""
    at = call.find(json.dumps(PROBE_KEY))
    if at < 0:
        return None
    start = call.rfind("{", 0, at)
    try:
        value, end = json.JSONDecoder().raw_decode(call, start)
    except json.JSONDecodeError:
        return None
    return (start, end) if value == {PROBE_KEY: PROBE_VALUE} else None


def tool_name(tool: Mapping[str, Any]) -> str:
    return str(tool.get("function", tool).get("name", ""))


def tool_schema(tool: Mapping[str, Any]) -> Any:
    return tool.get("function", tool).get("parameters") or {"type": "object"}


def check_structural_tag(template: TemplateSource, analysis: Analysis) -> GrammarMatch | None:
    """Check with llguidance that the tag built for get_weather accepts the template's own
    render of a get_weather call (None when the template's calls have no structural tag)."""
    tag = structural_tag(template, analysis, (EXAMPLE_TOOL,))
    if not tag.available:
        return None
    call = call_text(template, EXAMPLE_TOOL, dict(EXAMPLE_ARGUMENTS), analysis)
    return match_lark(tag.lark(), call)
