"""`python -m analyzer compare A B [--json]`: source, analysis and behaviour differences."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from analyzer.analysis.isolated import run_isolated
from analyzer.checks.compare import (
    BehaviourCase,
    TemplateComparison,
    compare_templates,
    comparison_to_json,
    unified_source_diff,
)
from analyzer.cli.main import load_template_argument
from analyzer.parsing.report import quote

CONTEXT = 40  # characters of common text shown around a differing render


def register(subparsers: Any) -> None:
    """Add the compare subcommand."""
    parser = subparsers.add_parser(
        "compare", help="compare two templates (source, analysis, renders)",
        description="Compare two chat templates: the line-level source diff, the analysis "
                    "fields that differ, and the canonical conversations they render "
                    "differently.")
    parser.add_argument("a", type=Path, help="first template (the old one)")
    parser.add_argument("b", type=Path, help="second template (the new one)")
    parser.add_argument("--template-name", default=None,
                        help="named template to use in both files")
    parser.add_argument("--json", action="store_true", help="print the canonical JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the comparison; exit status 1 when the templates behave differently."""
    a = load_template_argument(args.a, args.template_name)
    b = load_template_argument(args.b, args.template_name)
    # Both analyses and every render in a killable child, bounded as `analyze` is.
    comparison = run_isolated(
        lambda: compare_templates(a, b, name_a=str(args.a), name_b=str(args.b)),
        what="comparison",
    )
    if args.json:
        sys.stdout.write(comparison_to_json(comparison) + "\n")
    else:
        sys.stdout.write(format_comparison(comparison))
    return 1 if comparison.behaviour_changes or comparison.analysis else 0


def format_comparison(c: TemplateComparison) -> str:
    """The readable report: the three diffs, each with a count first."""
    removed = sum(1 for line in c.source if line.op == "-")
    added = sum(1 for line in c.source if line.op == "+")
    parts = [f"A: {c.name_a} ({c.sha256_a[:12]})\nB: {c.name_b} ({c.sha256_b[:12]})\n",
             "Source: identical\n" if c.same_source else
             f"Source: {removed} lines removed, {added} added\n{unified_source_diff(c)}\n",
             f"\nAnalysis: {len(c.analysis)} fields differ\n"]
    parts += [f"  {change.field}: {json.dumps(change.before, ensure_ascii=False)} -> "
              f"{json.dumps(change.after, ensure_ascii=False)}\n" for change in c.analysis]
    changed = c.behaviour_changes
    parts.append(f"\nBehaviour: {len(changed)} of {len(c.behaviour)} canonical "
                 "conversations render differently\n")
    parts += [format_case(case) for case in changed]
    return "".join(parts)


def format_case(case: BehaviourCase) -> str:
    """One differing render: both middles quoted in [[ ]], or the refusal."""
    if case.diff is None:
        return (f"  {case.name}:\n    A: {case.left_error or 'renders'}\n"
                f"    B: {case.right_error or 'renders'}\n")
    d = case.diff
    before, after = quote(d.prefix[-CONTEXT:])[1:-1], quote(d.suffix[:CONTEXT])[1:-1]
    return (f"  {case.name}:\n    - {before}[[{quote(d.left)[1:-1]}]]{after}\n"
            f"    + {before}[[{quote(d.right)[1:-1]}]]{after}\n")
