"""The lab's only door into the analyzer for loading and analysing templates.

Parsing, grammar and streaming go through `lab.analyses.parsing`, the live textbox's sample
through `lab.analyses.samples`; nothing else in the lab imports `analyzer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

import analyzer
from analyzer.analysis.resident import analyze_resident
from analyzer.errors import AnalyzerError, RenderLimitError
from analyzer.render import code_cache, loading
from analyzer.render.limits import RenderLimits
from analyzer.render.loading import TemplateSource

if TYPE_CHECKING:
    from lab.analyses.models import Template

__all__ = [
    "AnalyzerError",
    "TemplateSource",
    "analyze_template",
    "analyzer_version",
    "load_named_templates",
    "load_pasted",
    "verify_report",
]


def analyzer_version() -> str:
    """Return the version string analyses are stored under."""
    from analyzer.version import ANALYZER_VERSION

    return str(ANALYZER_VERSION)


def load_pasted(text: str) -> TemplateSource:
    """Read pasted text as a chat template (raw Jinja or a JSON config)."""
    return within_analyzer_limit(loading.load_template_text(text))


def load_named_templates(data: bytes, filename: str) -> list[TemplateSource]:
    """Read a file and return every named chat template in it, the default one first."""
    first = load_file(data, filename)
    others = [name for name in first.available_names if name != first.name]
    return [first, *(load_file(data, filename, name) for name in others)]


def within_analyzer_limit(loaded: TemplateSource) -> TemplateSource:
    """Refuse, before it is stored, a template longer than the analyzer compiles."""
    # A file may be larger (tokenizer_config.json carries the vocabulary's special tokens);
    # the template in it is held to the analyzer's own limit, with the analyzer's words.
    cap = max_template_chars()
    if len(loaded.source) > cap:
        raise RenderLimitError(
            f"the template is {len(loaded.source):,} characters; the limit is {cap:,}",
            limit="template_size", allowed=cap,
        )
    return loaded


def source_of(template: Template) -> TemplateSource:
    """Rebuild the analyzer's view of a stored template."""
    return TemplateSource(
        source=template.source,
        name=template.template_name,
        available_names=(template.template_name,),
        bos_token=template.bos_token,
        eos_token=template.eos_token,
    )


def analyze_template(template: Template) -> str:
    """Analyse a stored template in the worker's resident child (killed at its wall clock or
    memory cap, as a child per analysis would be); return the canonical JSON."""
    return analyze_resident(
        source_of(template),
        seconds=settings.LAB_ANALYSIS_WALL_SECONDS,
        memory_mb=settings.LAB_ANALYSIS_MEMORY_MB,
    )


def share_compiled_templates(folder: str) -> None:
    """Let every lab process reuse a template's compile done by another ("" turns it off):
    the analysis child compiles it, the web server's first render of the page loads it."""
    code_cache.use_folder(folder or None)


def max_template_chars() -> int:
    """Return the longest template source the analyzer compiles."""
    return RenderLimits().max_template_chars


def load_file(data: bytes, filename: str, template_name: str | None = None) -> TemplateSource:
    """Read one named chat template (the default one when no name is given) from a file."""
    loaded = loading.load_template_bytes(data, filename=filename, template_name=template_name)
    return within_analyzer_limit(loaded)


def verify_report(template: Template, result_json: str) -> str:
    """Round-trip a stored template through its analysis' parser and grammar: canonical JSON."""
    from analyzer.checks.verify import verification_to_json, verify_template

    analysis = analyzer.analysis_from_json(result_json)
    return verification_to_json(verify_template(source_of(template), analysis=analysis))
