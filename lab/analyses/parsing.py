"""The lab's only door into the analyzer for parsers, grammars and streaming.

Views, the websocket consumer and page templates talk to this module only; it turns the stored
analysis JSON and the page's request options into the analyzer's parser, grammar and stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from analyzer import peg
from analyzer.canonical import analysis_from_json
from analyzer.errors import AnalyzerError
from analyzer.gbnf import build_tool_grammar
from analyzer.generator import OutputStream, generate_parser
from analyzer.parsing.deviations import Deviation
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import Delta
from analyzer.peg import PegParseError

ReasoningFormat = Literal["auto", "none"]
ToolChoice = Literal["auto", "required", "none"]
TOOL_CHOICES: tuple[ToolChoice, ...] = ("auto", "required", "none")


@dataclass(frozen=True)
class ParserOptions:
    """What a request asks of the parser: tools, thinking, calls, reasoning, response format."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    enable_thinking: bool | None = None
    parallel_tool_calls: bool = False
    reasoning_format: ReasoningFormat = "auto"
    tool_choice: ToolChoice = "auto"
    json_schema: dict[str, Any] | None = None  # a response format: the answer is this JSON

    def as_dict(self) -> dict[str, Any]:
        return {
            "tools": self.tools,
            "enable_thinking": self.enable_thinking,
            "parallel_tool_calls": self.parallel_tool_calls,
            "reasoning_format": self.reasoning_format,
            "tool_choice": self.tool_choice,
            "json_schema": self.json_schema,
        }


@dataclass(frozen=True)
class GeneratedParser:
    """The readable PEG rules and GBNF grammar for one analysis and options, or why not."""

    available: bool
    peg: str = ""
    gbnf: str = ""
    gbnf_file: str = ""  # the grammar with its laziness, triggers and preserved tokens
    triggers: tuple[str, ...] = ()
    preserved_tokens: tuple[str, ...] = ()
    handler: str = ""
    lazy: bool = False  # the grammar applies only from the first trigger on
    problem: str = ""  # why nothing could be generated


@dataclass(frozen=True)
class ToolCallState:
    name: str
    arguments: str  # as streamed so far; pretty-printed once it is complete JSON
    id: str = ""


@dataclass(frozen=True)
class ParseProblem:
    """Text the parser could not read as structure: why, where, and the line with a caret."""

    message: str
    offset: int  # in the output typed so far
    line: int
    column: int
    context: str  # the failing line with a caret line under it
    kept: str = ""  # the marker kept as text; "" when the parse stopped here instead


@dataclass(frozen=True)
class DeviationView:
    """Where the output departs from the template's form, and what the parser did with it."""

    kind: str
    action: str  # accepted, kept_as_content or dropped
    message: str  # where, what was expected, what was found, what was done
    offset: int
    line: int
    column: int
    context: str  # the line with a caret under the offset


@dataclass(frozen=True)
class LiveState:
    """What the streaming parser has made of the text so far."""

    reasoning: str = ""
    content: str = ""
    tool_calls: tuple[ToolCallState, ...] = ()
    delta_count: int = 0
    # Markers kept as text because no valid call followed, then the error that stopped the
    # parse, if one did.
    problems: tuple[ParseProblem, ...] = ()
    deviations: tuple[DeviationView, ...] = ()  # in output order
    received: int = 0  # characters of text parsed
    finished: bool = False  # parsed as complete (finish), not as a stream still open


class LiveParser:
    """Feed text as it arrives; each call returns the message parsed so far.

    `finish` parses the text as complete (what is held back while streaming, like a trailing
    `</thi`, is settled); typing after that restarts the stream over the whole text.
    """

    def __init__(self, new_stream: Callable[[], OutputStream]) -> None:
        self._new_stream = new_stream
        self._stream = new_stream()
        self._finished = False
        self._delta_count = 0
        self.text = ""
        self.error: ParseProblem | None = None  # the parse stopped here

    def feed(self, chunk: str) -> LiveState:
        if self._finished:
            self._restart()
            chunk, self.text = self.text + chunk, ""
        self.text += chunk
        if self.error is None:
            self._run(lambda: self._stream.feed(chunk))
        return self.state()

    def finish(self) -> LiveState:
        if not self._finished and self.error is None:
            self._run(self._stream.finish)
            self._finished = True
        return self.state()

    def _restart(self) -> None:
        self._stream = self._new_stream()
        self._finished = False
        self._delta_count = 0
        self.error = None

    def _run(self, step: Callable[[], list[Delta]]) -> None:
        try:
            self._delta_count += len(step())
        except PegParseError as exc:
            self.error = _stopped_at(exc, self._stream.tail)
        except AnalyzerError as exc:
            message = str(exc).splitlines()[0]
            self.error = ParseProblem(message, len(self.text), 0, 0, "")

    def state(self) -> LiveState:
        message = self._stream.message()
        calls = tuple(ToolCallState(c.name, c.arguments, c.id) for c in message.tool_calls)
        kept = tuple(_kept_as_text(problem) for problem in self._stream.problems)
        return LiveState(
            reasoning=message.reasoning_content,
            content=message.content,
            tool_calls=calls,
            delta_count=self._delta_count,
            problems=kept + ((self.error,) if self.error is not None else ()),
            deviations=tuple(_view(d) for d in self._stream.deviations),
            received=len(self.text),
            finished=self._finished,
        )


def _view(deviation: Deviation) -> DeviationView:
    return DeviationView(str(deviation.kind), str(deviation.action), deviation.message,
                         deviation.offset, deviation.line, deviation.column, deviation.context)


def _kept_as_text(problem: peg.ParseProblem) -> ParseProblem:
    return ParseProblem(
        problem.message,
        problem.offset,
        problem.line,
        problem.column,
        problem.context,
        kept=problem.kept,
    )


def _stopped_at(exc: PegParseError, tail: str) -> ParseProblem:
    """Describe a parse error in the output's own positions (the stream read the prompt's tail
    first)."""
    located = peg.ParseProblem(
        exc.offset,
        exc.line,
        exc.column,
        exc.expected,
        exc.found,
        exc.rule,
        "",
        exc.offset,
        exc.context,
    ).shifted(tail)
    message = (
        str(exc)
        .splitlines()[0]
        .replace(
            f"at offset {exc.offset} (line {exc.line}, column {exc.column})",
            f"at offset {located.offset} (line {located.line}, column {located.column})",
        )
    )
    return ParseProblem(message, located.offset, located.line, located.column, exc.context)


STREAM_UNAVAILABLE = "No parser can be generated for this analysis, so nothing can be streamed."


def options_from_dict(data: dict[str, Any], base: ParserOptions) -> ParserOptions:
    """Read options sent by the page, keeping `base` for anything missing or malformed."""
    tools = data.get("tools", base.tools)
    thinking = data.get("enable_thinking", base.enable_thinking)
    reasoning = data.get("reasoning_format", base.reasoning_format)
    choice = data.get("tool_choice", base.tool_choice)
    schema = data.get("json_schema", base.json_schema)
    return ParserOptions(
        tools=tools if isinstance(tools, list) else base.tools,
        enable_thinking=thinking if thinking in (None, True, False) else base.enable_thinking,
        parallel_tool_calls=bool(data.get("parallel_tool_calls", base.parallel_tool_calls)),
        reasoning_format=reasoning if reasoning in ("auto", "none") else base.reasoning_format,
        tool_choice=choice if choice in TOOL_CHOICES else base.tool_choice,
        json_schema=schema if schema is None or isinstance(schema, dict) else base.json_schema,
    )


def generate(result_json: str, options: ParserOptions) -> GeneratedParser:
    """Generate the parser (PEG rules) and the GBNF grammar for an analysis under options."""
    try:
        analysis = analysis_from_json(result_json)
        parser = generate_parser(analysis, _parse_options(options))
        grammar = build_tool_grammar(
            analysis,
            options.tools,
            parallel_tool_calls=options.parallel_tool_calls,
            tool_choice=options.tool_choice,
            enable_thinking=options.enable_thinking,
            json_schema=options.json_schema,
            generation_prompt=parser.generation_prompt,
        )
    except AnalyzerError as exc:
        return GeneratedParser(available=False, problem=str(exc))
    return GeneratedParser(
        available=True,
        peg=parser.dump(),
        gbnf=grammar.grammar,
        gbnf_file=grammar.as_file(),
        triggers=tuple(f"{t.kind.value}: {t.value}" for t in grammar.triggers),
        preserved_tokens=grammar.preserved_tokens,
        handler=parser.handler,
        lazy=grammar.lazy,
    )


def open_stream(result_json: str, options: ParserOptions) -> LiveParser | None:
    """Start a streaming parse for an analysis, or None when no parser can be generated."""
    try:
        parser = generate_parser(analysis_from_json(result_json), _parse_options(options))
    except AnalyzerError:
        return None
    return LiveParser(parser.stream)


def _parse_options(options: ParserOptions) -> ParseOptions:
    return ParseOptions.make(
        tools=options.tools,
        enable_thinking=options.enable_thinking,
        reasoning_format=options.reasoning_format,
        parallel_tool_calls=options.parallel_tool_calls,
        tool_choice=options.tool_choice,
        json_schema=options.json_schema,
    )


def parse_report(result_json: str, options: ParserOptions, output: str,
                 partial: bool = False) -> dict[str, Any]:
    """Parse a whole model output: the OpenAI message, where text stayed text, and every
    deviation from the template's form ({"message", "problems", "deviations"}).

    Raises AnalyzerError when no parser can be generated or the output cannot be read (a
    PegParseError carries offset, line, column and the failing line with a caret).
    """
    parser = generate_parser(analysis_from_json(result_json), _parse_options(options))
    return parser.parse_report(output, partial=partial).to_dict()


def stream_events(result_json: str, options: ParserOptions, output: str,
                  chunk: int) -> Iterator[dict[str, Any]]:
    """Feed the output `chunk` characters at a time; yield each delta, then the final report.

    Events are {"type": "delta", "delta": {...}}, then {"type": "done", "message": {...},
    "problems": [...], "deviations": [...]}, or {"type": "error", "error": {...}} if the
    parse stops.
    """
    parser = generate_parser(analysis_from_json(result_json), _parse_options(options))
    stream = parser.stream()
    try:
        for at in range(0, len(output), chunk):
            yield from ({"type": "delta", "delta": d.to_dict()}
                        for d in stream.feed(output[at : at + chunk]))
        yield from ({"type": "delta", "delta": d.to_dict()} for d in stream.finish())
    except AnalyzerError as exc:
        yield {"type": "error", "error": error_payload(exc)}
        return
    yield {"type": "done", "message": stream.message().to_dict(),
           "problems": [problem.to_dict() for problem in stream.problems],
           "deviations": [deviation.to_dict() for deviation in stream.deviations]}


def error_payload(exc: AnalyzerError) -> dict[str, Any]:
    """Describe an analyzer error for a JSON client: its message, and where for parse errors."""
    payload: dict[str, Any] = {"code": "parse_error" if isinstance(exc, PegParseError)
                               else "analyzer_error", "message": str(exc)}
    if isinstance(exc, PegParseError):
        payload.update(offset=exc.offset, line=exc.line, column=exc.column,
                       context=exc.context)
    return payload
