"""`python -m analyzer verify FILE [--template-name NAME] [--json]`: round-trip self-check.

Exit status 0 when no case failed, 1 when a round trip or a grammar check failed, 2 when the
template cannot be loaded or analyzed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analyzer.checks.verify import (
    CaseResult,
    Outcome,
    Verification,
    verification_to_json,
    verify_template,
)
from analyzer.cli.main import load_template_argument


def register(subparsers: Any) -> None:
    """Add the verify subcommand."""
    parser = subparsers.add_parser(
        "verify", help="round-trip canonical messages through the template and its parser",
        description="Render canonical assistant messages through the template, parse the "
                    "generated part back with the parser generated from the analysis, compare, "
                    "and check the GBNF grammar accepts the same text.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json")
    parser.add_argument("--template-name", default=None, help="named template to verify")
    parser.add_argument("--json", action="store_true", help="print canonical JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Verify the file and print the report or the JSON."""
    try:
        source = load_template_argument(args.file, args.template_name)
    except OSError as exc:
        print(f"error: {args.file}: cannot read the file ({exc.strerror})", file=sys.stderr)
        return 2
    verification = verify_template(source)
    if args.json:
        sys.stdout.write(verification_to_json(verification) + "\n")
    else:
        sys.stdout.write(format_verification(verification, title=str(args.file)))
    return 1 if verification.failures else 0


def format_verification(verification: Verification, *, title: str) -> str:
    """Describe a verification for a reader: verdicts, then one line per case, failures in full."""
    lines = [f"{title}: round trip {verification.round_trip.value}, "
             f"grammar {verification.grammar.value}"]
    for case in verification.cases:
        lines += case_lines(case)
    return "\n".join(lines) + "\n"


def case_lines(case: CaseResult) -> list[str]:
    """Describe one case: a verdict line, then what differs and why when it did not pass."""
    head = (f"  {case.outcome.value.upper():4}  {case.case:15} grammar "
            f"{case.grammar.outcome.value}")
    if case.enable_thinking is not None:
        head += f"  (enable_thinking={case.enable_thinking})"
    lines = [head]
    if case.note:
        lines.append(f"        note: {case.note}")
    lines += [f"        {difference}" for difference in case.differences]
    if case.grammar.outcome == Outcome.FAIL:
        lines += ["        grammar: " + line for line in case.grammar.detail.splitlines()]
    if Outcome.FAIL in (case.outcome, case.grammar.outcome):
        lines.append(f"        output: {case.output!r}")
    return lines
