""""Serve it": the flags each engine needs for a template, and what breaks when none fits.

`serve_advice(analysis)` matches the analysis to the built-in parsers listed in
`analyzer/data/engines.json` (see `analyzer.checks.engines`) and returns, per engine, the
flags to paste, the parsers that fit, and plain sentences on what would go wrong.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from analyzer.canonical import to_jsonable
from analyzer.checks.engines import (
    Engine,
    EngineParser,
    closest,
    describe,
    family,
    fitting,
    load_engines,
    mismatches,
    needs_reasoning_parser,
    needs_tool_parser,
    reasoning_starts_in_prompt,
    tool_format_words,
)
from analyzer.handlers import AUTO, choose_handler
from analyzer.model import Analysis


@dataclass(frozen=True)
class EngineAdvice:
    """What to pass one engine for this template, and what would break."""

    engine: str  # Engine.id: "vllm", "sglang", "llamacpp"
    name: str
    flags: tuple[str, ...]  # the command-line arguments, in order
    tool_parser: str  # the chosen --tool-call-parser ("" if none fits or none is needed)
    reasoning_parser: str  # the chosen --reasoning-parser / --reasoning-format value
    other_tool_parsers: tuple[str, ...]  # further built-in parsers that also fit
    other_reasoning_parsers: tuple[str, ...]
    problems: tuple[str, ...]  # plain sentences: no parser fits, and what would break
    notes: tuple[str, ...]
    read_from: str  # where the engine's facts were read
    version: str  # the engine version they hold for
    launch: str  # the engine's start command ("vllm serve MODEL")

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def command_line(self) -> str:
        """The start command with the flags, shell-quoted."""
        return f"{self.launch} {shlex.join(self.flags)}"

    def to_dict(self) -> dict[str, Any]:
        """The advice as JSON, with its command line and verdict."""
        data: dict[str, Any] = to_jsonable(self)
        data.update(command_line=self.command_line, ok=self.ok)
        return data


@dataclass
class Draft:
    """An engine's advice while it is being worked out."""

    flags: list[str]
    problems: list[str]
    notes: list[str]
    tool: list[str]
    reasoning: list[str]


def serve_advice(analysis: Analysis, *,
                 template_path: str = "chat_template.jinja") -> tuple[EngineAdvice, ...]:
    """Advise every engine of the data file for this analysis (template_path goes in the flags)."""
    return tuple(advise(engine, analysis, template_path) for engine in load_engines())


def advise(engine: Engine, analysis: Analysis, template_path: str) -> EngineAdvice:
    """Work out one engine's flags, parsers and problems."""
    draft = Draft([engine.template_flag, template_path], [], [], [], [])
    if engine.derives_from_template:
        derived_advice(engine, analysis, draft)
    else:
        tool_advice(engine, analysis, draft)
        reasoning_advice(engine, analysis, draft)
    return EngineAdvice(
        engine.id, engine.name, tuple(draft.flags), first(draft.tool), first(draft.reasoning),
        tuple(draft.tool[1:]), tuple(draft.reasoning[1:]), tuple(draft.problems),
        tuple(draft.notes), engine.read_from, engine.version, engine.launch)


def first(names: list[str]) -> str:
    return names[0] if names else ""


def tool_advice(engine: Engine, analysis: Analysis, draft: Draft) -> None:
    """Pick the tool-call parser, or say that none reads the template's format."""
    if not needs_tool_parser(analysis):
        draft.notes.append("the template renders no tool calls: no tool-call parser needed")
        return
    draft.tool = [p.name for p in fitting(engine.tool_parsers, analysis)]
    if draft.tool:
        draft.flags += [*engine.tool_flags, engine.tool_parser_flag, draft.tool[0]]
        return
    draft.problems.append(
        f"none of the {len(engine.tool_parsers)} built-in {engine.name} tool-call parsers "
        f"listed in analyzer/data/engines.json reads this template's format "
        f"{tool_format_words(analysis)}: the model's tool calls would come back as plain "
        f"text in the content, with no tool_calls" + nearest(engine.tool_parsers, analysis))


def nearest(parsers: tuple[EngineParser, ...], analysis: Analysis) -> str:
    """Say how the closest parser differs, so the reader sees why it does not fit."""
    handler = choose_handler(analysis)
    if handler != AUTO:
        return (f". The template needs the dedicated {handler!r} handler (a format no render "
                f"reveals), and none of these parsers is that one")
    parser = closest(parsers, analysis)
    if parser is None:
        return ""
    diffs = "; ".join(describe(m) for m in mismatches(parser, analysis)[:3])
    return f". Closest: {parser.name} (expects {parser.expects}): {diffs}"


def reasoning_advice(engine: Engine, analysis: Analysis, draft: Draft) -> None:
    """Pick the reasoning parser; it must read reasoning the prompt opened, if it does."""
    if not needs_reasoning_parser(analysis):
        draft.notes.append("the template shows no reasoning: no reasoning parser needed")
        return
    by_markers = fitting(engine.reasoning_parsers, analysis)
    startless = reasoning_starts_in_prompt(analysis)
    usable = [p for p in by_markers if p.accepts_missing_start or not startless]
    # Of several that fit, the one of the tool parser's own family (qwen3 next to qwen3_coder).
    usable.sort(key=lambda p: bool(draft.tool) and family(p.name) != family(draft.tool[0]))
    draft.reasoning = [p.name for p in usable]
    if usable:
        draft.flags += [engine.reasoning_parser_flag, usable[0].name]
        return
    draft.problems.append(reasoning_problem(engine, analysis, by_markers))


def reasoning_problem(engine: Engine, analysis: Analysis, by_markers: list[EngineParser]) -> str:
    """Explain why no reasoning parser fits and what the client would see."""
    r = analysis.reasoning
    markers = " ... ".join(json.dumps(m, ensure_ascii=False) for m in (r.start, r.end))
    if by_markers:
        names = ", ".join(p.name for p in by_markers)
        return (f"{engine.name}'s {names} read {markers} but need the start marker in the "
                f"output; this template's generation prompt already writes it, so the "
                f"reasoning would come back as content")
    return (f"none of the {len(engine.reasoning_parsers)} built-in {engine.name} reasoning "
            f"parsers listed in analyzer/data/engines.json reads {markers}: the reasoning "
            f"would stay in the content, markers included"
            + nearest(engine.reasoning_parsers, analysis))


def derived_advice(engine: Engine, analysis: Analysis, draft: Draft) -> None:
    """llama.cpp derives its parser from the template; only unknown handlers break it."""
    draft.flags.insert(0, "--jinja")
    handler = choose_handler(analysis)
    if handler not in engine.dedicated_handlers:
        draft.problems.append(
            f"{engine.name} derives its parser from the template, but this template needs "
            f"the dedicated {handler!r} handler (its format no render reveals), which "
            f"{engine.name} does not have: calls and reasoning would be misread")
    if needs_reasoning_parser(analysis):
        draft.reasoning = ["auto", "deepseek"]
        draft.flags += [engine.reasoning_parser_flag, "auto"]
        draft.notes.append("--reasoning-format auto (or deepseek) returns reasoning in "
                           "reasoning_content; none leaves it in the content")
    draft.tool = ["derived from the template"] if needs_tool_parser(analysis) else []
