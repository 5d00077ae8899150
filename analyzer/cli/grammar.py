"""`python -m analyzer grammar FILE --tools TOOLS.json [...]`: print the GBNF grammar.

The text output is itself a valid GBNF file: lazy mode, triggers and preserved tokens come
first as `#` comments, then the rules. `--json` prints the GrammarResult's canonical JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analyzer.analysis.isolated import analyze_bounded
from analyzer.canonical import dumps_canonical
from analyzer.cli.main import CliInputError, load_template_argument, read_json
from analyzer.gbnf import build_tool_grammar


def register(subparsers: Any) -> None:
    """Add the grammar subcommand."""
    parser = subparsers.add_parser(
        "grammar", help="print the GBNF grammar for tool calls",
        description="Analyze a chat template and print the GBNF grammar (llama.cpp syntax), "
                    "its triggers and preserved tokens for a request with these tools.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json")
    parser.add_argument("--tools", type=Path, help="JSON file: a list of OpenAI tool "
                                                   "definitions (or {\"tools\": [...]})")
    parser.add_argument("--tool-choice", default="auto", choices=("auto", "required", "none"))
    parser.add_argument("--parallel-tool-calls", action="store_true")
    parser.add_argument("--enable-thinking", action=argparse.BooleanOptionalAction,
                        default=None, help="the template's enable_thinking (default: unset)")
    parser.add_argument("--json-schema", type=Path, help="JSON file: a response-format schema")
    parser.add_argument("--template-name", default=None, help="named template to use")
    parser.add_argument("--json", action="store_true", help="print canonical JSON")
    parser.set_defaults(handler=run)


def read_tools(path: Path | None) -> list[Any]:
    """Read the tool list: a JSON array, or an object with a "tools" array."""
    if path is None:
        return []
    data = read_json(path, "--tools")
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise CliInputError(f"--tools {path}: expected a JSON array of tool definitions, "
                            f"found {type(data).__name__}")
    return tools


def run(args: argparse.Namespace) -> int:
    """Analyze the template, build the grammar and print it."""
    analysis = analyze_bounded(load_template_argument(args.file, args.template_name))
    schema = read_json(args.json_schema, "--json-schema") if args.json_schema else None
    result = build_tool_grammar(
        analysis, read_tools(args.tools), parallel_tool_calls=args.parallel_tool_calls,
        tool_choice=args.tool_choice, enable_thinking=args.enable_thinking, json_schema=schema)
    sys.stdout.write(dumps_canonical(result) + "\n" if args.json else result.as_file())
    return 0
