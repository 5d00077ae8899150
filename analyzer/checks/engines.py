"""The serving engines' built-in parsers, and matching a template's analysis against them.

The facts about each engine's parsers (name, the format it expects, where in the engine's
source that was read) live in the package data file `analyzer/data/engines.json`; this module
only matches an Analysis against them and says plainly what would break when none fits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from functools import cache
from importlib import resources
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.handlers import AUTO, choose_handler
from analyzer.model import Analysis, ReasoningMode, ToolFormat

FORCED_OPEN_LABEL = "forced-open"  # a generation prompt that already opens the reasoning
# Reasoning modes whose output carries no start marker (the prompt wrote it, or there is none).
STARTLESS_MODES = (ReasoningMode.FORCED_OPEN, ReasoningMode.FORCED_CLOSED, ReasoningMode.DELIMITER)


class EngineDataError(AnalyzerError):
    """The engines data file is missing a field or has one of the wrong type."""


@dataclass(frozen=True)
class EngineParser:
    """One built-in parser of an engine, as its source describes it."""

    engine: str
    kind: str  # "tool" or "reasoning"
    name: str  # the value of the engine's --tool-call-parser / --reasoning-parser
    source: str  # the engine's file the facts were read from
    expects: str  # the output format, in words
    match: tuple[tuple[str, tuple[str, ...]], ...]  # analysis field -> accepted values
    accepts_missing_start: bool = False  # reasoning: reads reasoning the prompt opened


@dataclass(frozen=True)
class Engine:
    """A serving engine: its flags and its built-in parsers."""

    id: str
    name: str
    read_from: str
    version: str  # the engine version the facts hold for
    launch: str  # the engine's start command, MODEL standing for the model
    template_flag: str
    tool_flags: tuple[str, ...]
    tool_parser_flag: str
    reasoning_parser_flag: str
    structural_tag: str  # how the engine accepts a structural tag ("" if it does not)
    derives_from_template: bool  # llama.cpp: the parser is derived from the template itself
    dedicated_handlers: tuple[str, ...]
    tool_parsers: tuple[EngineParser, ...]
    reasoning_parsers: tuple[EngineParser, ...]


@dataclass(frozen=True)
class Mismatch:
    """A field where a parser expects one thing and the template writes another."""

    field: str
    expected: str
    found: str


@cache
def load_engines() -> tuple[Engine, ...]:
    """Read the engines data file shipped in the package (once)."""
    text = resources.files("analyzer").joinpath("data/engines.json").read_text("utf-8")
    return tuple(engine_from(data) for data in json.loads(text)["engines"])


def engine_from(data: dict[str, Any]) -> Engine:
    try:
        return Engine(
            data["id"], data["name"], data["read_from"], data["version"], data["launch"],
            data["template_flag"],
            tuple(data["tool_flags"]), data["tool_parser_flag"], data["reasoning_parser_flag"],
            data["structural_tag"], bool(data.get("derives_from_template", False)),
            tuple(data.get("dedicated_handlers", ())),
            tuple(parser_from(data["id"], "tool", p) for p in data["tool_parsers"]),
            tuple(parser_from(data["id"], "reasoning", p) for p in data["reasoning_parsers"]))
    except KeyError as exc:
        raise EngineDataError(f"engines.json: engine {data.get('id', '?')!r}: expected the "
                              f"field {exc.args[0]!r}; found none") from None


def parser_from(engine: str, kind: str, data: dict[str, Any]) -> EngineParser:
    match = tuple((path, tuple(v) if isinstance(v, list) else (v,))
                  for path, v in data["match"].items())
    return EngineParser(engine, kind, data["name"], data["source"], data["expects"], match,
                        bool(data.get("accepts_missing_start", False)))


def field_value(analysis: Analysis, path: str) -> str:
    """Read a dotted analysis field as text (`handler` is the handler a parser would use)."""
    if path == "handler":
        return choose_handler(analysis)
    value: Any = analysis
    for name in path.split("."):
        value = getattr(value, name)
    return str(value.value if isinstance(value, Enum) else value).strip()


def mismatches(parser: EngineParser, analysis: Analysis) -> tuple[Mismatch, ...]:
    """List the fields where the template differs from what the parser expects."""
    found = []
    for paths, accepted in parser.match:
        values = [field_value(analysis, path) for path in paths.split("|")]
        if not any(value in accepted for value in values):
            found.append(Mismatch(paths, " or ".join(accepted), " / ".join(values)))
    return tuple(found)


def fitting(parsers: tuple[EngineParser, ...], analysis: Analysis) -> list[EngineParser]:
    return [p for p in parsers if not mismatches(p, analysis)]


def closest(parsers: tuple[EngineParser, ...], analysis: Analysis) -> EngineParser | None:
    """The parser that agrees on the most fields, then differs on the fewest (first on a tie)."""
    def score(parser: EngineParser) -> tuple[int, int]:
        wrong = len(mismatches(parser, analysis))
        return (-(len(parser.match) - wrong), wrong)
    return min(parsers, key=score, default=None)


def reasoning_starts_in_prompt(analysis: Analysis) -> bool:
    """Tell whether the model's output can begin inside reasoning, without the start marker."""
    return analysis.reasoning.mode in STARTLESS_MODES or any(
        p.label == FORCED_OPEN_LABEL for p in analysis.generation_prompts)


def needs_tool_parser(analysis: Analysis) -> bool:
    return analysis.tools.format.mode != ToolFormat.NONE or choose_handler(analysis) != AUTO


def needs_reasoning_parser(analysis: Analysis) -> bool:
    return analysis.reasoning.mode != ReasoningMode.NONE


def tool_format_words(analysis: Analysis) -> str:
    """Describe the template's tool-call format by its markers."""
    t = analysis.tools
    markers = [m for m in (t.format.section_start, t.format.per_call_start, t.function.name_prefix,
                           t.arguments.name_prefix) if m.strip()]
    shown = " ... ".join(json.dumps(m, ensure_ascii=False) for m in markers) or "no markers"
    return f"{t.format.mode.value} ({shown})"


def describe(mismatch: Mismatch) -> str:
    """Say what one field should be and what the template has there."""
    found = json.dumps(mismatch.found, ensure_ascii=False) if mismatch.found.strip(" /") \
        else "nothing there"
    return f"{mismatch.field} {json.dumps(mismatch.expected, ensure_ascii=False)}, the template " \
           f"has {found}"


def family(name: str) -> str:
    """The model family a parser name starts with ("qwen3" for qwen3_coder, "minimax")."""
    return name.replace("-", "_").split("_")[0]
