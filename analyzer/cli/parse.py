"""`python -m analyzer parse FILE --input OUTPUT.txt [...]`: parse a model output.

Prints the message JSON (OpenAI form), or with `--stream-chunk N` the output fed N characters
at a time and one JSON delta per line, as a streaming client would receive them. Every place
where the output departs from the template's form (a deviation) goes to standard error with a
caret under it; `--json` also prints them, as `{"message": ..., "deviations": [...]}` (streamed:
a last line `{"deviations": [...]}`). A malformed output is not an error: exit status 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from analyzer.analysis.isolated import analyze_bounded
from analyzer.cli.main import load_template_argument
from analyzer.errors import AnalyzerError
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.parsing.deviations import Deviation
from analyzer.parsing.options import REASONING_FORMATS, TOOL_CHOICES, ParseOptions


class ParseInputError(AnalyzerError):
    """A file given to the parse command cannot be used."""


def register(subparsers: Any) -> None:
    """Add the parse subcommand."""
    parser = subparsers.add_parser(
        "parse", help="parse a model output with the template's generated parser",
        description="Analyze a chat template, generate its parser for these request options "
                    "and split a model output into reasoning, content and tool calls.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json")
    parser.add_argument("--input", type=Path, required=True,
                        help="the model's raw output (a text file; - reads standard input)")
    parser.add_argument("--tools", type=Path,
                        help="JSON file: a list of OpenAI tool definitions (or {\"tools\": [...]})")
    parser.add_argument("--enable-thinking", action=argparse.BooleanOptionalAction, default=None,
                        help="the template's enable_thinking (default: unset)")
    parser.add_argument("--reasoning-format", choices=REASONING_FORMATS, default="auto",
                        help="none leaves reasoning in the content (default: auto)")
    parser.add_argument("--parallel-tool-calls", action="store_true")
    parser.add_argument("--tool-choice", choices=TOOL_CHOICES, default="auto")
    parser.add_argument("--partial", action="store_true",
                        help="the output was cut mid-stream: print only what is certain")
    parser.add_argument("--stream-chunk", type=int, metavar="N",
                        help="feed the output N characters at a time; print the deltas")
    parser.add_argument("--template-name", default=None, help="named template to use")
    parser.add_argument("--json", action="store_true",
                        help="print the message with its deviations: {\"message\", \"deviations\"}")
    parser.add_argument("--grammar", action="store_true",
                        help="also print the generated grammar (PEG rules) to standard error")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Parse the output and print the message (or the deltas)."""
    if args.stream_chunk is not None and args.stream_chunk < 1:
        raise ParseInputError(
            f"--stream-chunk: expected a positive size; found {args.stream_chunk}")
    options = ParseOptions.make(
        tools=read_tools(args.tools), enable_thinking=args.enable_thinking,
        reasoning_format=args.reasoning_format, parallel_tool_calls=args.parallel_tool_calls,
        tool_choice=args.tool_choice,
    )
    if str(args.file) == "-" and str(args.input) == "-":
        raise ParseInputError("FILE and --input cannot both be - (standard input is read once)")
    parser = generate_parser(analyze_bounded(load_template_argument(args.file,
                                                                    args.template_name)),
                             options)
    if args.grammar:
        print(parser.dump(), file=sys.stderr)
    output = read_output(args.input)
    if args.stream_chunk is not None:
        deviations = print_deltas(parser, output, args.stream_chunk)
        if args.json:
            print(json.dumps({"deviations": [d.to_dict() for d in deviations]},
                             ensure_ascii=False))
    else:
        report = parser.parse_report(output, partial=args.partial)
        deviations = report.deviations
        shown = {"message": report.message.to_dict(),
                 "deviations": [d.to_dict() for d in deviations]} if args.json \
            else report.message.to_dict()
        print(json.dumps(shown, ensure_ascii=False, indent=2))
    for deviation in deviations:
        print(f"deviation: {deviation.message}\n{deviation.context}", file=sys.stderr)
    return 0


def print_deltas(parser: GeneratedParser, output: str, size: int) -> tuple[Deviation, ...]:
    """Stream the output in chunks of size characters; print each delta as a JSON line.

    Return where the output departs from the template's form."""
    stream = parser.stream()
    for at in range(0, len(output), size):
        for delta in stream.feed(output[at : at + size]):
            print(json.dumps(delta.to_dict(), ensure_ascii=False))
    for delta in stream.finish():
        print(json.dumps(delta.to_dict(), ensure_ascii=False))
    return stream.deviations


def read_output(path: Path) -> str:
    """Read the model output (standard input for -)."""
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ParseInputError(f"--input {path}: cannot read the file ({exc.strerror})") from exc


def read_tools(path: Path | None) -> list[Any]:
    """Read the tools file: a JSON array of definitions, or an object with a "tools" array."""
    if path is None:
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ParseInputError(f"--tools {path}: cannot read the file ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise ParseInputError(f"--tools {path}: not JSON ({exc.msg} at line {exc.lineno}, "
                              f"column {exc.colno})") from exc
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise ParseInputError(f"--tools {path}: expected a JSON array of tool definitions "
                              f"or {{\"tools\": [...]}}; found {type(data).__name__}")
    return tools
