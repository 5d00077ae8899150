"""`python -m analyzer serve-flags FILE [--json]`: the flags vLLM, SGLang and llama.cpp need."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from analyzer.analysis.isolated import analyze_bounded
from analyzer.checks.serve import EngineAdvice, serve_advice
from analyzer.checks.structural_tag import StructuralTag, check_structural_tag, structural_tag
from analyzer.cli.main import load_template_argument
from analyzer.model import Analysis
from analyzer.render.loading import TemplateSource


def register(subparsers: Any) -> None:
    """Add the serve-flags subcommand."""
    parser = subparsers.add_parser(
        "serve-flags", help="which engine flags and built-in parsers fit the template",
        description="Match the template's analysis to the built-in tool-call and reasoning "
                    "parsers of vLLM, SGLang and llama.cpp; print the flags, or what would "
                    "break when none fits.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json (- reads standard input)")
    parser.add_argument("--template-name", default=None, help="named template to use")
    parser.add_argument("--json", action="store_true", help="print the advice as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print each engine's flags; exit status 1 if some engine has no fitting parser."""
    path = "chat_template.jinja" if str(args.file) == "-" else str(args.file)
    template = load_template_argument(args.file, args.template_name)
    analysis = analyze_bounded(template)
    advice = serve_advice(analysis, template_path=path)
    tag = structural_tag(template, analysis)
    verdict = llguidance_verdict(template, analysis)
    if args.json:
        data = {"engines": [a.to_dict() for a in advice],
                "structural_tag": tag_json(tag, verdict)}
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(format_advice(a) for a in advice))
        sys.stdout.write("\n" + format_tag(tag, verdict))
    return 0 if all(a.ok for a in advice) else 1


def llguidance_verdict(template: TemplateSource, analysis: Analysis) -> str:
    """llguidance's verdict on the template's own call, or why it was not asked."""
    if importlib.util.find_spec("llguidance") is None:
        return "not checked: llguidance is not installed (pip install llguidance)"
    check = check_structural_tag(template, analysis)
    return "" if check is None else check.describe()


def tag_json(tag: StructuralTag, verdict: str) -> dict[str, Any]:
    """The structural tag (or why there is none) and llguidance's verdict on a real call."""
    if not tag.available:
        return {"available": False, "problem": tag.problem}
    return {"available": True, "response_format": tag.to_dict(), "note": tag.note,
            "llguidance_check": verdict}


def format_tag(tag: StructuralTag, verdict: str) -> str:
    """The structural tag block of the readable report."""
    head = "Structural tag (response_format for SGLang and vLLM; example tool get_weather)"
    if not tag.available:
        return f"{head}\n  none: {tag.problem}\n"
    lines = [head, "  " + json.dumps(tag.to_dict(), ensure_ascii=False),
             f"  llguidance, on the template's own render of a get_weather call: {verdict}"]
    if tag.note:
        lines.append(f"  note: {tag.note}")
    return "\n".join(lines) + "\n"


def format_advice(advice: EngineAdvice) -> str:
    """One engine's block: the command line, other parsers that fit, problems, notes."""
    verdict = "ok" if advice.ok else "PROBLEM"
    lines = [f"{advice.name} {advice.version}  ({verdict}; read from {advice.read_from})",
             f"  {advice.command_line}"]
    if advice.other_tool_parsers:
        lines.append(f"  also fits as tool-call parser: {', '.join(advice.other_tool_parsers)}")
    if advice.other_reasoning_parsers:
        lines.append(f"  also fits as reasoning parser: "
                     f"{', '.join(advice.other_reasoning_parsers)}")
    lines += [f"  problem: {problem}" for problem in advice.problems]
    lines += [f"  note: {note}" for note in advice.notes]
    return "\n".join(lines) + "\n"
