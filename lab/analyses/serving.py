"""The "Serve it" card's door into the analyzer: engine flags, parsers, structural tag.

From a stored analysis: per engine (vLLM, SGLang, llama.cpp) the flags to pass and what
would break when no built-in parser fits (analyzer.checks.serve, from the engines data file),
and the tool-call format as a structural tag checked with llguidance.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from analyzer import EngineAdvice, analysis_from_json, serve_advice
from analyzer.checks.structural_tag import check_structural_tag, structural_tag
from analyzer.errors import AnalyzerError
from lab.analyses import engine
from lab.analyses.models import Template

# The flags name the template file as the user would save it next to the model.
TEMPLATE_PATH = "chat_template.jinja"


@dataclass(frozen=True)
class ServeCard:
    engines: tuple[EngineAdvice, ...]
    tag_json: str  # the structural tag as response_format JSON ("" when none describes calls)
    tag_problem: str
    tag_note: str
    tag_check: str  # llguidance's verdict on a real call rendered by the template


def serve_card(template: Template, result_json: str) -> ServeCard:
    """Work out the card for a finished analysis."""
    analysis = analysis_from_json(result_json)
    advice = serve_advice(analysis, template_path=TEMPLATE_PATH)
    source = engine.source_of(template)
    try:
        tag = structural_tag(source, analysis)
        check = check_structural_tag(source, analysis)
    except AnalyzerError as exc:
        return ServeCard(advice, "", f"no structural tag: {exc}", "", "")
    if not tag.available:
        return ServeCard(advice, "", tag.problem, "", "")
    verdict = "" if check is None else check.describe()
    text = json.dumps(tag.to_dict(), indent=2, ensure_ascii=False)
    return ServeCard(advice, text, "", tag.note, verdict)
