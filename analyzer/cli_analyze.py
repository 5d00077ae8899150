"""`python -m analyzer analyze FILE [--template-name NAME] [--json]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analyzer import loading
from analyzer.analysis import analyze
from analyzer.canonical import analysis_to_json
from analyzer.report import format_report


def register(subparsers: Any) -> None:
    """Add the analyze subcommand."""
    parser = subparsers.add_parser("analyze", help="analyze a chat template",
                                   description="Analyze a chat template by differential rendering.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json")
    parser.add_argument("--template-name", default=None, help="named template to analyze")
    parser.add_argument("--json", action="store_true", help="print canonical JSON")
    parser.set_defaults(handler=run)


def load(path: Path, template_name: str | None) -> loading.TemplateSource:
    """Load a template file through the loader (file reader when it provides one)."""
    reader = getattr(loading, "load_template_file", None)
    if reader is not None:
        result: loading.TemplateSource = reader(path, template_name=template_name)
        return result
    text = path.read_text(encoding="utf-8")
    return loading.load_template_text(text, filename=path.name, template_name=template_name)


def run(args: argparse.Namespace) -> int:
    """Analyze the file and print the report or the JSON."""
    try:
        source = load(args.file, args.template_name)
    except OSError as exc:
        print(f"error: {args.file}: cannot read the file ({exc.strerror})", file=sys.stderr)
        return 2
    analysis = analyze(source)
    if args.json:
        sys.stdout.write(analysis_to_json(analysis) + "\n")
    else:
        sys.stdout.write(format_report(analysis, title=str(args.file)))
    return 0
