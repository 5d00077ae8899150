"""`python -m analyzer check VECTORS.jsonl [--templates DIR] [--json]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from analyzer.checks.vectors import VectorResult, describe_failure, load_vectors, run_vector


def register(subparsers: Any) -> None:
    """Add the check subcommand."""
    parser = subparsers.add_parser(
        "check", help="run parse test vectors",
        description="Parse every vector's output and compare with the message it expects.")
    parser.add_argument("vectors", type=Path, help="vector file (JSON lines)")
    parser.add_argument("--templates", type=Path, default=None,
                        help="directory of the templates the vectors name "
                             "(default: ../templates next to the vector file)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per vector instead of failure diffs")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run every vector; print failures (or JSON records) and the closing count."""
    templates = args.templates or args.vectors.resolve().parent / ".." / "templates"
    try:
        vectors = list(load_vectors(args.vectors))
    except OSError as exc:
        print(f"error: {args.vectors}: cannot read the file ({exc.strerror})", file=sys.stderr)
        return 2
    passed = failed = 0
    for vector in vectors:
        result = run_vector(vector, templates)
        passed, failed = (passed + 1, failed) if result.passed else (passed, failed + 1)
        report(result, args.json)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def report(result: VectorResult, as_json: bool) -> None:
    """Print one vector's outcome: its JSON record, or its diff if it failed."""
    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, sort_keys=True))
    elif not result.passed:
        print(describe_failure(result) + "\n")

