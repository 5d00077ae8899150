"""The render playground's door into the analyzer: render one or two requests, diff them.

The page sends each side's inputs as form text (JSON for messages, tools and kwargs); the
rendered prompts come back as pane HTML (whitespace and special tokens visible, the
difference highlighted as in the variant pairs). The JSON API (workbench_api) renders
through the same functions. Every render runs in a child process bounded like an analysis
(analyzer.analysis.isolated): a hostile template ends with an error naming the limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from analyzer import RenderRequest, diff_renders, render_conversation
from analyzer.analysis.isolated import run_isolated
from analyzer.analysis.pipeline import ANALYSIS_CLOCK
from analyzer.analysis.playground import RenderDiff, RenderResult
from analyzer.errors import AnalyzerError
from lab.analyses import engine
from lab.analyses.models import Template
from lab.analyses.presenters import pane_html, special_token_pattern, visible_html

# Renders shown in the lab (and their permalinks) read the analysis' moment: they never change.
FIXED_NOW = ANALYSIS_CLOCK
# A render is one pass of the template: far below an analysis' bound, still generous.
RENDER_SECONDS = 8.0
RENDER_MEMORY_MB = 512

DEFAULT_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": "Look it up.", "tool_calls": [
        {"id": "call12345", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
     "content": '{"sky": "clear", "temp": 21}'},
]
DEFAULT_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}},
]


@dataclass(frozen=True)
class RenderedSide:
    """One side's prompt as pane HTML, or why it could not be rendered."""

    html: SafeString | None
    error: str
    notes: tuple[str, ...]
    length: int


@dataclass(frozen=True)
class Playground:
    """What the page shows: side A, side B (when compared) and what differs."""

    a: RenderedSide
    b: RenderedSide | None
    identical: bool
    changed_inputs: tuple[str, ...]


def with_string_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same messages with each call's arguments as a JSON string (as OpenAI sends them)."""
    out = []
    for message in messages:
        calls = [
            {**call, "function": {**call["function"],
                                  "arguments": json.dumps(call["function"]["arguments"])}}
            for call in message.get("tool_calls") or []
        ]
        out.append({**message, "tool_calls": calls} if calls else message)
    return out


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def build_request(data: dict[str, Any]) -> RenderRequest:
    """Read one side's cleaned form data as a render request (AnalyzerError if unusable)."""
    return RenderRequest.make(
        data["messages"],
        tools=data["tools"],
        kwargs=data["kwargs"],
        add_generation_prompt=data["add_generation_prompt"],
        continue_final_message=data["continue_final_message"],
        bos_token=data["bos_token"] or None,
        eos_token=data["eos_token"] or None,
    )


def render(
    template: Template, preserved: list[str], a: RenderRequest, b: RenderRequest | None
) -> Playground:
    """Render side A (and B), and cut the two prompts into common parts and difference."""
    source = engine.source_of(template)
    tokens = [*preserved, template.bos_token, template.eos_token]
    specials = special_token_pattern([token for token in tokens if token])
    left, left_error = _render(source, a)
    if b is None:
        return Playground(_side(left, left_error, None, 0, specials, "a"), None, False, ())
    right, right_error = _render(source, b)
    if left is None or right is None:
        return Playground(_side(left, left_error, None, 0, specials, "a"),
                          _side(right, right_error, None, 0, specials, "b"), False, ())
    diff = diff_renders(left, right)
    prefix, suffix = len(diff.diff.prefix), len(diff.diff.suffix)
    return Playground(
        _side(left, "", prefix, suffix, specials, "a"),
        _side(right, "", prefix, suffix, specials, "b"),
        diff.identical,
        diff.changed_inputs,
    )


def render_bounded(source: engine.TemplateSource, request: RenderRequest) -> RenderResult:
    """Render in a killable child process (AnalysisLimitError names the limit it ran over)."""
    return run_isolated(lambda: render_conversation(source, request, now=FIXED_NOW),
                        seconds=RENDER_SECONDS, memory_mb=RENDER_MEMORY_MB, what="render")


def render_stored(template: Template, request_json: str) -> RenderResult:
    """Render a request (RenderRequest JSON: {"messages", "tools", "kwargs",
    "add_generation_prompt", "continue_final_message", "bos_token", "eos_token"}) through a
    stored template, with the template's own bos/eos unless the request sets them."""
    request = RenderRequest.from_json(request_json)  # a bad request is refused before forking
    return render_bounded(engine.source_of(template), request)


def render_pair(template: Template, left_json: str, right_json: str) -> RenderDiff:
    """Render two requests through one template and diff the prompts."""
    return diff_renders(render_stored(template, left_json), render_stored(template, right_json))


def _render(source: engine.TemplateSource, request: RenderRequest) -> tuple[Any, str]:
    try:
        return render_bounded(source, request), ""
    except AnalyzerError as exc:
        return None, str(exc)


def _side(result: Any, error: str, prefix: int | None, suffix: int, specials: Any,
          side: str) -> RenderedSide:
    """One prompt as HTML: with its difference highlighted when prefix is given, else plain."""
    if result is None:
        return RenderedSide(None, error, (), 0)
    prompt: str = result.prompt
    notes = []
    if result.render_note:
        notes.append(f"rendered leniently: {result.render_note}")
    if result.unused_kwargs:
        notes.append("the template never reads " + ", ".join(result.unused_kwargs))
    if prefix is None:
        html = mark_safe(visible_html(prompt, specials, show_spaces=True))  # noqa: S308
    else:
        html = pane_html(prompt, prefix, suffix, [], side, specials)
    return RenderedSide(html, "", tuple(notes), len(prompt))
