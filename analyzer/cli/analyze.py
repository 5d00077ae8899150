"""`python -m analyzer analyze FILE [--template-name NAME] [--json]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analyzer.analysis.isolated import analyze_bounded
from analyzer.canonical import analysis_to_json
from analyzer.cli.main import load_template_argument
from analyzer.parsing.report import format_report


def register(subparsers: Any) -> None:
    """Add the analyze subcommand."""
    parser = subparsers.add_parser("analyze", help="analyze a chat template",
                                   description="Analyze a chat template by differential rendering.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json; - reads standard input")
    parser.add_argument("--template-name", default=None, help="named template to analyze")
    parser.add_argument("--json", action="store_true", help="print canonical JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Analyze the file and print the report or the JSON."""
    # An unreadable or invalid file raises TemplateLoadError, which cli.main reports.
    analysis = analyze_bounded(load_template_argument(args.file, args.template_name))
    if args.json:
        sys.stdout.write(analysis_to_json(analysis) + "\n")
    else:
        sys.stdout.write(format_report(analysis, title=str(args.file)))
    return 0
