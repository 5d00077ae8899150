"""Command line entry: `python -m analyzer SUBCOMMAND ...`.

Each subcommand lives in its own module `analyzer.cli.<name>` that exposes
`register(subparsers)`; the module adds its parser and sets `handler` (a function taking the
parsed arguments and returning the exit status) with `set_defaults(handler=...)`. New
subcommands need no change here: every module of the package but this one is discovered.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import analyzer.cli
from analyzer.errors import AnalyzerError
from analyzer.render.loading import TemplateSource, load_template_bytes, load_template_file
from analyzer.version import ANALYZER_VERSION


def subcommand_modules() -> list[str]:
    """Names of the package's subcommand modules (all but `main`), sorted."""
    return sorted(
        f"analyzer.cli.{info.name}"
        for info in pkgutil.iter_modules(analyzer.cli.__path__)
        if info.name != "main"
    )


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every discovered subcommand."""
    parser = argparse.ArgumentParser(prog=program_name(),
                                     description="Template Lab's chat template analyzer.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {ANALYZER_VERSION}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in subcommand_modules():
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; analyzer errors print their message and exit with status 2."""
    args = build_parser().parse_args(argv)
    try:
        status = args.handler(args)
    except AnalyzerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return int(status)


def program_name() -> str:
    """Name the program as it was started: `template-lab` or `python -m analyzer`."""
    invoked = Path(sys.argv[0]).name if sys.argv else ""
    return "template-lab" if invoked == "template-lab" else "python -m analyzer"


def load_template_argument(path: Path, template_name: str | None = None) -> TemplateSource:
    """Load the template a FILE argument names; `-` reads it from standard input."""
    if str(path) == "-":
        return load_template_bytes(sys.stdin.buffer.read(), filename="",
                                   template_name=template_name)
    return load_template_file(path, template_name=template_name)


class CliInputError(AnalyzerError):
    """A file or value given on the command line cannot be used."""


def read_json(path: Path, what: str) -> Any:
    """Read a JSON file given to an option, or raise CliInputError saying which file and why."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CliInputError(f"{what} {path}: cannot read the file ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise CliInputError(f"{what} {path}: not JSON ({exc.msg} at line {exc.lineno}, "
                            f"column {exc.colno})") from exc
