"""Parse test vectors (llama.cpp's chat tests): load them, run one, compare by the upstream rules.

Format: `../shared/corpus/vectors/README.md`. A vector names a template, request options,
the conversation, the model's raw output and the message expected. What is parsed is the
generation prompt's tail + the output, the prompt rendered from the vector's conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from analyzer.analysis.pipeline import analyze, compiled
from analyzer.errors import AnalyzerError
from analyzer.generator import (
    PromptContext,
    analysis_context,
    conversation_context,
    generate_parser,
)
from analyzer.model import Analysis
from analyzer.parsing.message import Message
from analyzer.parsing.options import ParseOptions, canonical
from analyzer.render.loading import load_template_file


class VectorFormatError(AnalyzerError):
    """A line of a vector file is not a parse vector."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Vector:
    """One parse case."""

    seq: int
    id: str | None
    template: str
    options: ParseOptions
    messages_json: str  # the conversation, canonical JSON
    output: str
    partial: bool
    expected: Mapping[str, Any]


@dataclass(frozen=True)
class VectorResult:
    """The outcome of one vector."""

    vector: Vector
    actual: Message | None
    error: str | None
    differences: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return self.error is None and not self.differences

    def to_dict(self) -> dict[str, Any]:
        """Return the `check --json` record."""
        record: dict[str, Any] = {"seq": self.vector.seq}
        if self.vector.id is not None:
            record["id"] = self.vector.id
        record["passed"] = self.passed
        record["actual"] = self.actual.to_dict() if self.actual is not None else None
        record["error"] = self.error
        return record


def load_vectors(path: str | Path) -> Iterator[Vector]:
    """Read a vector file (JSON lines), one Vector per non-empty line."""
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                yield vector_from(line, number)


def vector_from(line: str, number: int) -> Vector:
    """Build a Vector from one JSON line."""
    try:
        data = json.loads(line)
        options = data["options"]
        return Vector(
            seq=int(data["seq"]),
            id=str(data["id"]) if data.get("id") is not None else None,
            template=str(data["template"]),
            options=options_from(options),
            messages_json=canonical(data.get("messages_oaicompat") or []),
            output=str(data["input"]),
            partial=bool(data.get("is_partial", False)),
            expected=data["expected"],
        )
    except (ValueError, KeyError, TypeError, AnalyzerError) as exc:
        raise VectorFormatError(f"not a parse vector ({exc})", line=number) from None


def options_from(options: Mapping[str, Any]) -> ParseOptions:
    """Build parse options from a vector's options object."""
    return ParseOptions.make(
        tools=options.get("tools") or [],
        enable_thinking=options.get("enable_thinking"),
        reasoning_format=options.get("reasoning_format") or "auto",
        parallel_tool_calls=bool(options.get("parallel_tool_calls")),
        tool_choice=options.get("tool_choice") or "auto",
        json_schema=options.get("json_schema") or None,
        continue_final_message=options.get("continue_final_message") or "none",
        chat_template_kwargs=options.get("chat_template_kwargs") or {},
    )


@lru_cache(maxsize=128)
def template_analysis(path: Path) -> Analysis:
    """Load and analyze a template file (once per process)."""
    return analyze(load_template_file(path))


@lru_cache(maxsize=1024)
def vector_prompt(path: Path, messages_json: str, options: ParseOptions) -> PromptContext:
    """Render the generation prompt of a vector's conversation (cached: vectors share them)."""
    source = load_template_file(path)
    analysis = template_analysis(path)
    # Render as the analysis did (lenient where transformers refuses what llama.cpp allows).
    chat = compiled(source.source, source.bos_token, source.eos_token, analysis.render_mode)
    messages = json.loads(messages_json)
    try:
        return conversation_context(chat, analysis, messages, options)
    except AnalyzerError:
        # The conversation does not render here: the analysis' own prompt is the next best.
        return analysis_context(analysis, options)


def run_vector(vector: Vector, templates: Path) -> VectorResult:
    """Parse a vector's output and compare with what it expects; errors become failures."""
    path = templates / vector.template
    try:
        analysis = template_analysis(path)
        prompt = vector_prompt(path, vector.messages_json, vector.options)
        parser = generate_parser(analysis, vector.options, prompt=prompt)
        actual = parser.parse(vector.output, partial=vector.partial)
    except AnalyzerError as exc:
        return VectorResult(vector, None, f"{type(exc).__name__}: {exc}", ())
    except Exception as exc:  # noqa: BLE001 - one broken case must not stop the run
        return VectorResult(vector, None, f"internal error: {type(exc).__name__}: {exc}", ())
    return VectorResult(vector, actual, None, tuple(differences(vector, actual)))


def differences(vector: Vector, actual: Message) -> list[str]:
    """Compare by the upstream rules; return readable differences (empty: equal)."""
    expected = vector.expected
    found = []
    for key, got in (("content", actual.content), ("reasoning_content", actual.reasoning_content)):
        want = expected.get(key) or ""
        if want.strip() != got.strip():
            found.append(f"{key}:\n    expected {want!r}\n    actual   {got!r}")
    found += call_differences(expected.get("tool_calls") or [], actual, vector.partial)
    return found


def call_differences(expected: list[Mapping[str, Any]], actual: Message,
                     partial: bool) -> list[str]:
    """Compare tool calls: count, order, names, ids (when expected), JSON-equal arguments."""
    calls = actual.tool_calls
    if len(expected) != len(calls):
        shown = [f"{c.name}({c.arguments})" for c in calls]
        wanted = [f"{c.get('name')}({c.get('arguments')})" for c in expected]
        return [f"tool_calls: expected {len(expected)} {wanted}, actual {len(calls)} {shown}"]
    found = []
    for index, (want, got) in enumerate(zip(expected, calls, strict=True)):
        where = f"tool_calls[{index}]"
        if want.get("name") != got.name:
            found.append(f"{where}.name: expected {want.get('name')!r}, actual {got.name!r}")
        if want.get("id") and want.get("id") != got.id:
            found.append(f"{where}.id: expected {want.get('id')!r}, actual {got.id!r}")
        found += argument_differences(where, want.get("arguments") or "", got.arguments, partial)
    return found


def argument_differences(where: str, wanted: Any, got: str, partial: bool) -> list[str]:
    """Compare arguments as JSON values (the expected ones as text, or already decoded)."""
    wanted_value = json_value(wanted, partial) if isinstance(wanted, str) else wanted
    got_value = json_value(got, partial)
    if got_value is not INVALID and wanted_value is not INVALID and wanted_value == got_value:
        return []
    shown = wanted if isinstance(wanted, str) else json.dumps(wanted, ensure_ascii=False)
    return [f"{where}.arguments:\n    expected {shown!r}\n    actual   {got!r}"]


INVALID = object()  # arguments that are not JSON, in a complete output


def json_value(text: str, partial: bool) -> Any:
    """Decode arguments for comparison; unfinished JSON counts as "" in partial cases."""
    try:
        return json.loads(text)
    except ValueError:
        return "" if partial else INVALID


def describe_failure(result: VectorResult) -> str:
    """Describe a failed vector for a reader: which case, what differed."""
    vector = result.vector
    title = f"FAIL seq {vector.seq}" + (f" ({vector.id})" if vector.id else "")
    lines = [f"{title}  {vector.template}  {describe_options(vector)}",
             f"  output: {vector.output[:300]!r}"]
    if result.error is not None:
        lines.append(f"  error: {result.error}")
    lines += ["  " + d.replace("\n", "\n  ") for d in result.differences]
    return "\n".join(lines)


def describe_options(vector: Vector) -> str:
    """Summarize the options that matter for reading a failure."""
    o = vector.options
    parts = [f"reasoning_format={o.reasoning_format}", f"enable_thinking={o.enable_thinking}"]
    if o.tools:
        parts.append(f"tools={len(o.tools)}")
    if o.parallel_tool_calls:
        parts.append("parallel")
    if o.json_schema is not None:
        parts.append("json_schema")
    if o.continue_final_message != "none":
        parts.append(f"continue={o.continue_final_message}")
    if vector.partial:
        parts.append("partial")
    return " ".join(parts)
