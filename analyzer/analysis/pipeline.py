"""`analyze()`: run every comparison on a chat template and assemble the Analysis."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache

from analyzer.analysis.budget import analysis_budget
from analyzer.analysis.caps import probe_capabilities
from analyzer.analysis.content import analyze_content
from analyzer.analysis.context import AnalysisContext
from analyzer.analysis.reasoning import analyze_reasoning, generation_prompts
from analyzer.analysis.tools import analyze_tools
from analyzer.analysis.variants import RenderInput, RenderOutcome, VariantRenderer
from analyzer.analysis.workarounds import apply_workarounds
from analyzer.model import (
    Analysis,
    Comparison,
    ContentAnalysis,
    ReasoningAnalysis,
    RenderMode,
    ToolsAnalysis,
)
from analyzer.render.limits import RenderLimits
from analyzer.render.loading import TemplateSource, load_template_text
from analyzer.render.template import ChatTemplate
from analyzer.version import ANALYZER_VERSION

# Comparisons are listed in this order (then any others by id) so the JSON is stable.
AUTO_HANDLER = "auto"
COMPARISON_ORDER = ("R1", "R2", "R3", "C1", "C1r", "C1w", "C2", "T1", "T2", "T3", "A1", "A2",
                    "A3", "A3n", "A3o", "A3a", "A3z", "T5", "T6", "T7")


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
    return analyze_uncached(source, compiled)


# Templates that print today's date (strftime_now) would make analyses differ from day to
# day and between time zones; an analysis renders them at this fixed moment instead.
ANALYSIS_CLOCK = datetime(2025, 1, 1, 12, 0, 0)

Compiler = Callable[[str, str, str, RenderMode], ChatTemplate]

# The analysis inputs are a few short messages and two small tools: the largest render of the
# 68 corpus templates is 6,798 characters (c4ai-command-r7b, tool_use). 32 KiB leaves about 5x
# headroom and keeps what an analysis stores small: ~40 variants of at most 32 KiB of newlines
# (2 bytes each in JSON) are about 2.6 MB, where 2,000,000 characters per render made 60 MB.
ANALYSIS_LIMITS = RenderLimits(max_output_chars=32_768)


def compile_template(
    source: str, bos_token: str, eos_token: str, mode: RenderMode = RenderMode.HF
) -> ChatTemplate:
    """Compile a template for analysis: on the analysis clock, in the given render mode."""
    return ChatTemplate(
        source, bos_token=bos_token, eos_token=eos_token, limits=ANALYSIS_LIMITS,
        now=ANALYSIS_CLOCK, mode=mode,
    )


@lru_cache(maxsize=256)
def compiled(
    source: str, bos_token: str, eos_token: str, mode: RenderMode = RenderMode.HF
) -> ChatTemplate:
    """compile_template, once per process (Jinja compilation dominates a cold analysis)."""
    if mode is RenderMode.LENIENT:
        return compiled(source, bos_token, eos_token, RenderMode.HF).in_mode(mode)
    return compile_template(source, bos_token, eos_token, mode)


def analyze_uncached(source: TemplateSource, compile: Compiler = compile_template) -> Analysis:
    """Analyze a template, rendering everything anew (compiled by `compile`).

    Templates render exactly as transformers does; if that refuses a render that llama.cpp's
    Jinja allows, the whole analysis is redone in lenient mode and says why.
    """
    with analysis_budget():
        return _analyze_within_budget(source, compile)


def _analyze_within_budget(source: TemplateSource, compile: Compiler) -> Analysis:
    tokens = (source.source, source.bos_token, source.eos_token)
    renderer = VariantRenderer(compile(*tokens, RenderMode.HF))
    analysis = run_analysis(source, renderer.template, renderer)
    failed = rescuable_failures(renderer)
    if not failed:
        return analysis
    lenient_chat = renderer.template.in_mode(RenderMode.LENIENT)  # no second Jinja compile
    refusal = lenient_rescue(failed, renderer, lenient_chat)
    if refusal is None:
        return analysis
    lenient = run_analysis(source, lenient_chat)
    return dataclasses.replace(
        lenient, render_mode=RenderMode.LENIENT, render_note=lenient_note(refusal)
    )


# Failures a lenient render can avoid (marked by the renderer: what only transformers refuses).
RESCUABLE_FAILURES = ("lenient",)


def rescuable_failures(renderer: VariantRenderer) -> list[tuple[str, RenderOutcome]]:
    """List the renders (inputs and outcomes) that failed in a way lenient mode might avoid."""
    return [(params, out) for params, out in renderer.cache.items()
            if out.failure in RESCUABLE_FAILURES]


def lenient_rescue(
    failed: list[tuple[str, RenderOutcome]], renderer: VariantRenderer, chat: ChatTemplate
) -> str | None:
    """Return the error of the first failed render that chat (lenient) renders, if any."""
    lenient = VariantRenderer(chat, defaults=dict(renderer.defaults))
    for params, outcome in failed:
        if lenient.render(RenderInput("retry", params)).ok:
            return outcome.error
    return None


def lenient_note(error: str) -> str:
    """Say what transformers refused and why the analysis rendered leniently."""
    first, *rest = error.splitlines()
    where = f" at `{rest[0].strip()}`" if rest else ""
    return (
        f"transformers refuses this template's renders ({first}{where}); llama.cpp's Jinja"
        " renders them, so the analysis rendered in lenient mode: in-place changes to lists"
        " and dicts the template builds are allowed, and tojson writes a generator as a list"
    )


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
        handler=AUTO_HANDLER,  # until the analysis is complete: see dedicated_handler
        caps=probe.caps,
        reasoning=reasoning,
        content=content,
        tools=tools,
        preserved_tokens=(),
        markers=tuple(ctx.markers),
        comparisons=ordered_comparisons(ctx.comparisons),
        generation_prompts=(),
        workarounds=(),
        eos_token=source.eos_token,
    )
    analysis = apply_workarounds(source.source, analysis)
    analysis = dataclasses.replace(
        analysis,
        preserved_tokens=preserved_tokens(analysis.reasoning, analysis.content, analysis.tools),
        generation_prompts=generation_prompts(ctx, analysis.reasoning),
    )
    # Handlers recognize their format from the finished analysis (renders and prompts).
    return dataclasses.replace(analysis, handler=dedicated_handler(analysis))


def dedicated_handler(analysis: Analysis) -> str:
    """Name the dedicated handler that parses this template's output, or "auto"."""
    try:
        # The parser generator's package; imported here since it builds on this module's output.
        from analyzer.handlers import choose_handler
    except ImportError:
        return analysis.handler
    return choose_handler(analysis)


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
