"""`analyze()`: run every comparison on a chat template and assemble the Analysis."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from functools import lru_cache

from analyzer.caps import probe_capabilities
from analyzer.content import analyze_content
from analyzer.context import AnalysisContext
from analyzer.loading import TemplateSource, load_template_text
from analyzer.model import (
    Analysis,
    Comparison,
    ContentAnalysis,
    ReasoningAnalysis,
    ToolsAnalysis,
)
from analyzer.reasoning import analyze_reasoning, generation_prompts
from analyzer.render import ChatTemplate
from analyzer.tools import analyze_tools
from analyzer.variants import VariantRenderer
from analyzer.version import ANALYZER_VERSION
from analyzer.workarounds import apply_workarounds

# Comparisons are listed in this order (then any others by id) so the JSON is stable.
AUTO_HANDLER = "auto"
COMPARISON_ORDER = ("R1", "R2", "R3", "C1", "C1r", "C1w", "C2", "T1", "T2", "T3", "A1", "A2",
                    "A3", "A3n", "A3o", "A3a", "T5", "T6", "T7")


def analyze(template: TemplateSource | str, *, template_name: str | None = None) -> Analysis:
    """Analyze a chat template (source text or loaded TemplateSource) by differential rendering.

    Analyses are immutable, so the same template source (and tokens) is analyzed once per
    process and the result is shared.
    """
    source = template if isinstance(template, TemplateSource) else load_template_text(
        template, template_name=template_name)
    return analyze_source(source)


@lru_cache(maxsize=256)
def analyze_source(source: TemplateSource) -> Analysis:
    """Analyze one loaded template (cached: the result is immutable)."""
    return run_analysis(source, compiled(source.source, source.bos_token, source.eos_token))


@lru_cache(maxsize=256)
def compiled(source: str, bos_token: str, eos_token: str) -> ChatTemplate:
    """Compile a template once per process; Jinja compilation dominates a cold analysis."""
    return with_fixed_clock(ChatTemplate(source, bos_token=bos_token, eos_token=eos_token))


# Templates that print today's date (strftime_now) would make analyses differ from day to
# day and between time zones; an analysis renders them at this fixed moment instead.
ANALYSIS_CLOCK = datetime(2025, 1, 1, 12, 0, 0)


def fixed_strftime_now(fmt: str) -> str:
    """strftime_now as of ANALYSIS_CLOCK."""
    return ANALYSIS_CLOCK.strftime(fmt)


def with_fixed_clock(chat: ChatTemplate) -> ChatTemplate:
    """Make the compiled template's strftime_now read ANALYSIS_CLOCK.

    ChatTemplate has no public clock option yet, so this swaps the global in the template's
    own (per-instance) environment; the compiled template sees its environment's globals.
    """
    env = getattr(chat, "_env", None)
    if env is not None and "strftime_now" in env.globals:
        env.globals["strftime_now"] = fixed_strftime_now
    return chat


def run_analysis(
    source: TemplateSource, chat: ChatTemplate, renderer: VariantRenderer | None = None
) -> Analysis:
    """Run every comparison through a compiled template (uncached; renderer may be given)."""
    renderer = renderer or VariantRenderer(chat)
    probe = probe_capabilities(renderer)
    ctx = AnalysisContext(renderer, probe.calls, probe.base_tools)
    reasoning = analyze_reasoning(ctx, probe.caps.supports_tool_calls)
    content = analyze_content(ctx, reasoning, probe.caps.requires_non_null_content)
    tools = analyze_tools(ctx, probe.caps, reasoning, content)
    analysis = Analysis(
        analyzer_version=ANALYZER_VERSION,
        template_sha256=source.sha256,
        template_name=source.name,
        # The generated parser; analyzer.handlers names dedicated ones from the analysis.
        handler=AUTO_HANDLER,
        caps=probe.caps,
        reasoning=reasoning,
        content=content,
        tools=tools,
        preserved_tokens=(),
        markers=tuple(ctx.markers),
        comparisons=ordered_comparisons(ctx.comparisons),
        generation_prompts=(),
        workarounds=(),
    )
    analysis = apply_workarounds(source.source, analysis)
    return dataclasses.replace(
        analysis,
        preserved_tokens=preserved_tokens(analysis.reasoning, analysis.content, analysis.tools),
        generation_prompts=generation_prompts(ctx, analysis.reasoning),
    )


def ordered_comparisons(comparisons: dict[str, Comparison]) -> tuple[Comparison, ...]:
    """List comparisons in the fixed R, C, T, A order."""
    rank = {cid: index for index, cid in enumerate(COMPARISON_ORDER)}
    ordered = sorted(comparisons.values(), key=lambda c: (rank.get(c.id, len(rank)), c.id))
    return tuple(ordered)


def preserved_tokens(
    reasoning: ReasoningAnalysis, content: ContentAnalysis, tools: ToolsAnalysis
) -> tuple[str, ...]:
    """Collect every non-empty marker, trimmed and without duplicates, in field order."""
    fmt, fun, args, ident, index = (tools.format, tools.function, tools.arguments, tools.call_id,
                                    tools.call_index)
    candidates = (
        reasoning.start, reasoning.end, content.start, content.end,
        fmt.section_start, fmt.section_end, fmt.per_call_start, fmt.per_call_end,
        fun.name_prefix, fun.name_suffix, fun.close, args.start, args.end,
        args.name_prefix, args.name_suffix, args.separator, args.value_prefix, args.value_suffix,
        args.typed_value_prefix, args.typed_value_suffix, ident.prefix, ident.suffix,
        index.prefix, index.suffix,
    )
    seen: dict[str, None] = {}
    for candidate in candidates:
        token = candidate.strip()
        if token:
            seen.setdefault(token, None)
    return tuple(seen)
