"""Generated parsers for the benchmark formats: analysis of each request's template + generator.

Each `../shared/bench-inputs/<format>/request.json` names the template and the request options;
the parser is what `analyzer.generator` builds from the template's analysis for them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from analyzer.analysis.pipeline import analyze
from analyzer.checks.vectors import options_from
from analyzer.generator import generate_parser
from analyzer.peg import Parser
from analyzer.render.loading import load_template_file

REPO = Path(__file__).resolve().parents[1]
INPUTS = REPO / ".." / "shared" / "bench-inputs"
TEMPLATES = REPO / ".." / "shared" / "corpus" / "templates"
FORMATS = ("hermes-2-pro", "functionary-v3.1", "qwen3-coder")


def generated(name: str, tools: Sequence[Mapping[str, Any]]) -> Parser:
    """Build the generated parser for a benchmark format (its request's template and options).

    The outputs are what follows the generation prompt; these templates' prompts leave
    nothing for the parser to read before it, which is checked here.
    """
    request = json.loads((INPUTS / name / "request.json").read_text(encoding="utf-8"))
    options = options_from({**request["options"], "tools": list(tools)})
    analysis = analyze(load_template_file(TEMPLATES / request["template"]))
    parser = generate_parser(analysis, options)
    if parser.prompt.tail:
        raise ValueError(f"{name}: the prompt leaves {parser.prompt.tail!r} to parse first")
    return parser.parser


GRAMMARS = {name: (lambda tools, name=name: generated(name, tools)) for name in FORMATS}
