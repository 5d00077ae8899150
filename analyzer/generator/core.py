"""generate_parser(): build, cache and run the parser an analysis and request options call for."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any

from analyzer import peg as p
from analyzer.generator.build import Build
from analyzer.generator.calls import CallGrammar
from analyzer.generator.content import output_grammar
from analyzer.generator.prompt import PromptContext, analysis_context
from analyzer.generator.tools_json import json_calls
from analyzer.generator.tools_tag_json import tag_json_calls
from analyzer.generator.tools_tagged import tagged_calls
from analyzer.generator.unknown_calls import ToolBuilder, undeclared_calls
from analyzer.handlers import choose_handler, handler_grammar
from analyzer.model import Analysis, ToolFormat
from analyzer.parsing.deviations import Deviation, collected, in_output
from analyzer.parsing.mapper import to_message
from analyzer.parsing.message import Message
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.recovery import recovered_events
from analyzer.parsing.stream import Delta, StreamParser

# The roles of the events a report describes (PROBLEM: text kept as text; DEVIATION: noted).
REPORTED = frozenset((p.Role.PROBLEM, p.Role.DEVIATION))

TOOL_BUILDERS: dict[ToolFormat, ToolBuilder] = {
    ToolFormat.JSON_NATIVE: json_calls,
    ToolFormat.TAG_WITH_JSON: tag_json_calls,
    ToolFormat.TAG_WITH_TAGGED: tagged_calls,
}


@dataclass(frozen=True)
class GeneratedParser:
    """A parser for one template and request: reads the prompt's tail, then the output."""

    parser: p.Parser = field(repr=False)
    handler: str  # "auto" or the dedicated handler's name
    options: ParseOptions
    prompt: PromptContext

    @property
    def generation_prompt(self) -> str:
        """The generation prompt the parser was set up for."""
        return self.prompt.generation_prompt

    def dump(self) -> str:
        """Return the grammar as readable PEG rules."""
        return self.parser.dump()

    def parse(self, output: str, *, partial: bool = False) -> Message:
        """Parse a model output (partial: it may stop anywhere; only what is certain counts)."""
        return self.parse_report(output, partial=partial).message

    def parse_report(self, output: str, *, partial: bool = False) -> ParseReport:
        """Parse a model output; also say where text was kept as text and why."""
        tail = self.prompt.tail
        text = tail + output
        events, complete = recovered_events(self.parser.start, text, partial, len(tail))
        result = p.ParseResult.of(text, tuple(events), complete)
        if REPORTED.isdisjoint(map(itemgetter(0), events)):
            return ParseReport(to_message(result))  # nothing kept as text, nothing noted
        problems = tuple(problem.shifted(tail) for problem in result.problems)
        deviations = in_output(collected(result.problems, result.notices), tail)
        return ParseReport(to_message(result), problems, deviations)

    def stream(self) -> OutputStream:
        """Start parsing an output chunk by chunk."""
        tail = self.prompt.tail
        return OutputStream(StreamParser(self.parser, len(tail)), tail)


@dataclass(frozen=True)
class ParseReport:
    """A parsed message, where text was kept as text although a marker promised more (a call
    marker that starts no valid call), and every deviation: positions in the output."""

    message: Message
    problems: tuple[p.ParseProblem, ...] = ()
    # Every departure from the template's form, in output order (problems included, as
    # malformed calls kept as content); a clean output has none.
    deviations: tuple[Deviation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return the canonical JSON form."""
        return {"message": self.message.to_dict(),
                "problems": [problem.to_dict() for problem in self.problems],
                "deviations": [deviation.to_dict() for deviation in self.deviations]}


class OutputStream:
    """A stream parser that reads the prompt's tail before the first chunk."""

    def __init__(self, stream: StreamParser, tail: str) -> None:
        self.stream = stream
        self.pending = tail
        self.tail = tail

    def feed(self, chunk: str) -> list[Delta]:
        """Add a chunk of output; return the deltas that became certain."""
        text, self.pending = self.pending + chunk, ""
        return self.stream.feed(text)

    def finish(self) -> list[Delta]:
        """Declare the output complete; return the remaining deltas."""
        deltas = self.stream.feed(self.pending) if self.pending else []
        self.pending = ""
        return deltas + self.stream.finish()

    def message(self) -> Message:
        """Return the message streamed so far."""
        return self.stream.message()

    @property
    def problems(self) -> tuple[p.ParseProblem, ...]:
        """Return where text was kept as text so far (positions in the output)."""
        return tuple(problem.shifted(self.tail) for problem in self.stream.problems)

    @property
    def deviations(self) -> tuple[Deviation, ...]:
        """Return where the output departs from the template's form so far (in the output)."""
        return in_output(self.stream.deviations, self.tail)


def generate_parser(
    analysis: Analysis, options: ParseOptions, *, prompt: PromptContext | None = None
) -> GeneratedParser:
    """Build the parser for an analysis and request options (grammars are cached).

    prompt: the generation prompt the output continues; by default the analysis' prompt for
    the options' enable_thinking setting (render a conversation's own with
    `conversation_context` when the template's prompt depends on the conversation).
    """
    parser = cached_grammar(analysis, options)
    context = prompt or analysis_context(analysis, options)
    return GeneratedParser(parser, choose_handler(analysis), options, context)


def parse_output(
    analysis: Analysis, options: ParseOptions, output: str, *, partial: bool = False,
    prompt: PromptContext | None = None,
) -> Message:
    """Parse one model output into a message."""
    return generate_parser(analysis, options, prompt=prompt).parse(output, partial=partial)


@lru_cache(maxsize=512)
def cached_grammar(analysis: Analysis, options: ParseOptions) -> p.Parser:
    """Build (once per analysis and options) the grammar's parser."""
    b = Build(analysis, options)
    dedicated = handler_grammar(choose_handler(analysis), b)
    if dedicated is not None:
        return p.Parser(dedicated, name="output")
    undeclared = undeclared_calls(b, TOOL_BUILDERS.get(b.analysis.tools.format.mode))
    return p.Parser(output_grammar(b, tool_calls(b), undeclared), name="output")


def tool_calls(b: Build) -> CallGrammar | None:
    """Build the tool-call grammar, if the request has tools and the template renders calls."""
    builder = TOOL_BUILDERS.get(b.analysis.tools.format.mode)
    if builder is None or not b.options.wants_tools:
        return None
    return builder(b, b.options.tools)
