"""Compare two templates: their sources line by line, their analyses, and how they render.

Typical use: two Hub revisions of one repo ("the template changed and my tool calls broke"),
or any two stored templates. `compare_templates(a, b)` returns a frozen TemplateComparison
whose canonical JSON (`comparison_to_json`) is stable, for permalinks.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from analyzer.analysis.diff import diff_split
from analyzer.analysis.pipeline import ANALYSIS_CLOCK, analyze
from analyzer.analysis.playground import RenderRequest, render_conversation
from analyzer.canonical import dumps_canonical, to_jsonable
from analyzer.errors import AnalyzerError
from analyzer.model import Analysis, DiffSplit
from analyzer.render.loading import TemplateSource

# The moment strftime_now formats in both renders (the analysis' own clock), so dates never
# show up as a difference.
FIXED_NOW = ANALYSIS_CLOCK
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
CALL = {"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
SYSTEM = {"role": "system", "content": "You are terse."}
USER = {"role": "user", "content": "What is the weather in Paris?"}
ANSWER = {"role": "assistant", "content": "Sunny, 21 C."}
THOUGHTFUL = {"role": "assistant", "content": "Sunny.", "reasoning_content": "Look it up."}
CALLING = {"role": "assistant", "content": "", "tool_calls": [CALL]}
RESULT = {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
          "content": '{"sky": "clear", "temp": 21}'}


@dataclass(frozen=True)
class SourceLine:
    """One line of the line-level source diff: kept (" "), removed ("-") or added ("+")."""

    op: str
    text: str
    line_a: int | None  # 1-based line number in A (None for an added line)
    line_b: int | None


@dataclass(frozen=True)
class FieldChange:
    """One analysis field (dotted, e.g. "tools.format.per_call_start") before and after."""

    field: str
    before: str
    after: str


@dataclass(frozen=True)
class BehaviourCase:
    """One canonical conversation rendered by both templates."""

    name: str
    request: str  # RenderRequest.to_json() of the inputs both were given
    left: str  # the prompt A renders ("" when A refused, see left_error)
    right: str
    left_error: str
    right_error: str
    diff: DiffSplit | None  # None when both render the same text or one refused

    @property
    def same(self) -> bool:
        return (self.left, self.left_error) == (self.right, self.right_error)


@dataclass(frozen=True)
class TemplateComparison:
    """Two templates compared three ways."""

    name_a: str
    name_b: str
    sha256_a: str
    sha256_b: str
    source: tuple[SourceLine, ...]  # whole source, diff-ordered ("" when identical)
    analysis: tuple[FieldChange, ...]  # only the fields that differ
    behaviour: tuple[BehaviourCase, ...]  # every conversation, same ones included

    @property
    def same_source(self) -> bool:
        return self.sha256_a == self.sha256_b

    @property
    def behaviour_changes(self) -> tuple[BehaviourCase, ...]:
        return tuple(case for case in self.behaviour if not case.same)


def compare_templates(a: TemplateSource, b: TemplateSource, *, name_a: str = "A",
                      name_b: str = "B") -> TemplateComparison:
    """Compare two loaded templates: source lines, analysis fields, canonical renders."""
    return TemplateComparison(
        name_a, name_b, a.sha256, b.sha256, source_diff(a.source, b.source),
        analysis_diff(analyze(a), analyze(b)), behaviour_diff(a, b))


def comparison_to_json(comparison: TemplateComparison) -> str:
    """Canonical JSON of a comparison (sorted keys; same inputs, same bytes)."""
    return dumps_canonical(comparison)


def source_diff(a: str, b: str) -> tuple[SourceLine, ...]:
    """Diff two sources line by line (difflib), numbering each line on its side."""
    left, right = a.splitlines(), b.splitlines()
    lines: list[SourceLine] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            lines += [SourceLine(" ", left[i], i + 1, j1 + i - i1 + 1) for i in range(i1, i2)]
            continue
        lines += [SourceLine("-", left[i], i + 1, None) for i in range(i1, i2)]
        lines += [SourceLine("+", right[j], None, j + 1) for j in range(j1, j2)]
    return tuple(lines)


def unified_source_diff(comparison: TemplateComparison, context: int = 3) -> str:
    """The source diff as unified-diff text (what `diff -u` prints)."""
    a = [line.text for line in comparison.source if line.op != "+"]
    b = [line.text for line in comparison.source if line.op != "-"]
    return "\n".join(difflib.unified_diff(a, b, comparison.name_a, comparison.name_b,
                                          n=context, lineterm=""))


def analysis_diff(a: Analysis, b: Analysis) -> tuple[FieldChange, ...]:
    """List the analysis fields that differ: formats, markers, capabilities, prompts."""
    before, after = analysis_fields(a), analysis_fields(b)
    return tuple(FieldChange(key, before.get(key, ""), after.get(key, ""))
                 for key in sorted(before.keys() | after.keys())
                 if before.get(key, "") != after.get(key, ""))


def analysis_fields(analysis: Analysis) -> dict[str, str]:
    """Flatten the parts of an analysis a user of the template depends on to dotted fields."""
    parts: dict[str, Any] = {
        "handler": analysis.handler, "render_mode": analysis.render_mode,
        "caps": analysis.caps, "reasoning": analysis.reasoning, "content": analysis.content,
        "tools": analysis.tools, "preserved_tokens": analysis.preserved_tokens,
        "generation_prompts": {prompt_key(p.enable_thinking): {"text": p.text, "label": p.label}
                               for p in analysis.generation_prompts},
    }
    return dict(flatten({key: to_jsonable(value) for key, value in parts.items()}, ""))


def prompt_key(enable_thinking: bool | None) -> str:
    return "enable_thinking=" + ("unset" if enable_thinking is None else
                                 str(enable_thinking).lower())


def flatten(value: Any, prefix: str) -> list[tuple[str, str]]:
    """Turn nested dicts into (dotted key, shown value); lists and scalars become JSON text."""
    if isinstance(value, dict):
        return [pair for key, item in value.items()
                for pair in flatten(item, f"{prefix}.{key}" if prefix else key)]
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return [(prefix, shown)]


def canonical_conversations() -> list[tuple[str, RenderRequest]]:
    """The conversations both templates render: each a name and its request."""
    tools = [WEATHER_TOOL]
    return [
        ("system + user", RenderRequest.make([SYSTEM, USER])),
        ("two turns", RenderRequest.make([USER, ANSWER, {"role": "user", "content": "And?"}])),
        ("reasoning kept in history", RenderRequest.make([USER, THOUGHTFUL, USER])),
        ("thinking on", RenderRequest.make([USER], kwargs={"enable_thinking": True})),
        ("thinking off", RenderRequest.make([USER], kwargs={"enable_thinking": False})),
        ("tools offered", RenderRequest.make([SYSTEM, USER], tools=tools)),
        ("tool call", RenderRequest.make([USER, CALLING], tools=tools,
                                         add_generation_prompt=False)),
        ("tool response", RenderRequest.make([USER, CALLING, RESULT], tools=tools)),
        ("string arguments", RenderRequest.make([USER, string_arguments_call()], tools=tools,
                                                add_generation_prompt=False)),
    ]


def string_arguments_call() -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}
    return {**CALLING, "tool_calls": [{**CALL, "function": function}]}


def behaviour_diff(a: TemplateSource, b: TemplateSource) -> tuple[BehaviourCase, ...]:
    """Render each canonical conversation through both templates and diff the prompts."""
    return tuple(behaviour_case(name, request, a, b)
                 for name, request in canonical_conversations())


def behaviour_case(name: str, request: RenderRequest, a: TemplateSource,
                   b: TemplateSource) -> BehaviourCase:
    left, left_error = try_render(a, request)
    right, right_error = try_render(b, request)
    both = not left_error and not right_error and left != right
    return BehaviourCase(name, request.to_json(), left, right, left_error, right_error,
                         diff_split(left, right) if both else None)


def try_render(template: TemplateSource, request: RenderRequest) -> tuple[str, str]:
    """Render, or return the error a refusal gives (a refusal is a behaviour too)."""
    try:
        return render_conversation(template, request, now=FIXED_NOW).prompt, ""
    except AnalyzerError as exc:
        return "", str(exc).splitlines()[0]
