"""`python -m analyzer robustness FILE [--template-name NAME] [--json]`: the perturbation table.

Exit status 0 when every applicable case gave the expected message and deviations, 1 when a
case did not, 2 when the template cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analyzer.analysis.isolated import run_isolated
from analyzer.checks.robustness import (
    PERTURBATIONS,
    Robustness,
    RobustnessCase,
    check_robustness,
    pass_rate,
    robustness_to_json,
)
from analyzer.checks.verify import Outcome
from analyzer.cli.main import load_template_argument


def register(subparsers: Any) -> None:
    """Add the robustness subcommand."""
    parser = subparsers.add_parser(
        "robustness", help="parse perturbed renders of the template (what models really write)",
        description="Render canonical messages through the template (calls with no, typed, "
                    "nested and tricky string arguments, content with calls, reasoning), "
                    "perturb each output the ways real models depart from it (wrappers, "
                    "separators, left-out markers, whitespace, text after calls, arguments as "
                    "a JSON string, an output cut off inside a call...), and check that the "
                    "parser gives the expected message and reports the expected deviation, "
                    "one-shot and streamed in random chunks.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json (- reads standard input)")
    parser.add_argument("--template-name", default=None, help="named template to check")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random stream chunks")
    parser.add_argument("--json", action="store_true", help="print canonical JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check the file and print the table or the JSON."""
    try:
        source = load_template_argument(args.file, args.template_name)
    except OSError as exc:
        print(f"error: {args.file}: cannot read the file ({exc.strerror})", file=sys.stderr)
        return 2
    # The analysis and the renders in a killable child, bounded as `analyze` is.
    result = run_isolated(lambda: check_robustness(source, seed=args.seed), what="robustness check")
    if args.json:
        sys.stdout.write(robustness_to_json(result) + "\n")
    else:
        sys.stdout.write(format_robustness(result, title=str(args.file)))
    return 1 if any(c.outcome == Outcome.FAIL for c in result.cases) else 0


def format_robustness(result: Robustness, *, title: str) -> str:
    """One line per perturbation (verdict, base message, expected deviation), failures in full."""
    passed, total = pass_rate([result])
    lines = [f"{title}: {passed}/{total} perturbation cases pass, "
             f"{result.whole_message_failures} failed the whole message"]
    refused = {p.name for p in PERTURBATIONS if not p.accepted}
    for case in result.cases:
        lines += case_lines(case, case.perturbation in refused)
    return "\n".join(lines) + "\n"


def case_lines(case: RobustnessCase, refused: bool) -> list[str]:
    """Describe one case: a verdict line, then what differs when it did not pass."""
    expected = ", ".join(case.expected_deviations) or "none"
    must = "must stay text" if refused else "accepted"
    head = f"  {case.outcome.value.upper():4}  {case.perturbation:32} "
    if case.outcome == Outcome.SKIP:
        return [head + "(does not fit the template)"]
    lines = [head + f"from {case.base:15} deviation {expected} ({must})"]
    lines += [f"        {difference}" for difference in case.differences]
    if case.outcome == Outcome.FAIL:
        lines.append(f"        output: {case.output!r}")
    return lines
