"""analyze(): the assembled Analysis, its provenance and its workarounds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer import ANALYZER_VERSION, analyze
from analyzer.errors import TemplateRenderError
from analyzer.model import Analysis, RenderMode
from analyzer.render.loading import TemplateSource

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
FORMAT_FILES = sorted(FORMATS.glob("*.jinja"))


def assert_markers_exact(analysis: Analysis) -> None:
    by_id = {c.id: c for c in analysis.comparisons}
    for marker in analysis.markers:
        if marker.comparison.startswith(("workaround:", "R2:derived")):
            continue
        comparison = by_id[marker.comparison]
        for span, variant in ((marker.span_a, comparison.variant_a),
                              (marker.span_b, comparison.variant_b)):
            if span is not None:
                assert variant is not None
                assert variant.rendered[span.start : span.end] == marker.text, marker


@pytest.mark.parametrize("path", FORMAT_FILES, ids=lambda p: p.stem)
def test_every_marker_span_points_at_the_marker_text(path: Path) -> None:
    analysis = analyze(path.read_text())
    assert_markers_exact(analysis)


def test_every_field_marker_is_recorded_with_provenance() -> None:
    analysis = analyze((FORMATS / "tools_tagged.jinja").read_text())
    roles = {m.role: m.text for m in analysis.markers}
    assert roles["tools.function.name_prefix"] == analysis.tools.function.name_prefix
    assert roles["tools.arguments.value_suffix"] == analysis.tools.arguments.value_suffix
    assert roles["tools.format.per_call_end"] == analysis.tools.format.per_call_end


def test_analysis_header_fields() -> None:
    source = (FORMATS / "plain.jinja").read_text()
    analysis = analyze(source)
    assert analysis.analyzer_version == ANALYZER_VERSION
    assert analysis.handler == "auto"
    assert analysis.template_name == "default"
    assert analysis.template_sha256 == TemplateSource(source=source).sha256


def test_comparisons_come_in_a_fixed_order() -> None:
    ids = [c.id for c in analyze((FORMATS / "tools_tagged.jinja").read_text()).comparisons]
    assert ids[:4] == ["R1", "R2", "R3", "C1"]
    assert ids.index("T1") < ids.index("T2") < ids.index("A1") < ids.index("T7")


def test_preserved_tokens_are_the_markers_trimmed_and_unique() -> None:
    analysis = analyze((FORMATS / "tools_tagged.jinja").read_text())
    assert analysis.preserved_tokens == ("<tool_call>", "</tool_call>", "<function=", ">",
                                         "</function>", "<parameter=", "</parameter>")


def test_generation_prompts_cover_thinking_unset_on_and_off() -> None:
    analysis = analyze((FORMATS / "think_forced_open.jinja").read_text())
    assert [p.enable_thinking for p in analysis.generation_prompts] == [None, True, False]


def test_a_workaround_is_applied_and_listed() -> None:
    source = ("{{ 'Write your thoughts between <think></think> and write your response between "
              "<response></response>' }}{% for m in messages %}{{ m.content }}{% endfor %}")
    analysis = analyze(source)
    assert analysis.workarounds == ("granite-3.3-thinking-prompt",)
    assert analysis.content.start == "<response>"
    origins = {m.role: m.comparison for m in analysis.markers}
    assert origins["content.start"] == "workaround:granite-3.3-thinking-prompt"


def test_no_workaround_on_an_ordinary_template() -> None:
    assert analyze((FORMATS / "tools_json_native.jinja").read_text()).workarounds == ()


def test_a_syntax_error_is_reported_with_its_line() -> None:
    with pytest.raises(TemplateRenderError) as info:
        analyze("line one\n{% if x %}never closed")
    assert "line 2" in str(info.value) or info.value.lineno == 2


def test_a_template_source_object_is_accepted() -> None:
    source = TemplateSource(source=(FORMATS / "plain.jinja").read_text(), name="tool_use",
                            available_names=("default", "tool_use"))
    assert analyze(source).template_name == "tool_use"


DATED = "{{ strftime_now('%d %b %Y %H:%M') }}{% for m in messages %}{{ m.content }}{% endfor %}"
# Prints the template rendered on the real clock, then its uncached analysis.
CLOCK_PROBE = """
import sys
from analyzer.analysis.pipeline import analyze_uncached
from analyzer.canonical import analysis_to_json
from analyzer.render.loading import TemplateSource
from analyzer.render.template import ChatTemplate
source = sys.stdin.read()
print(ChatTemplate(source).render([]))
print(analysis_to_json(analyze_uncached(TemplateSource(source=source))))
"""


def on_clock_of(time_zone: str) -> tuple[str, str]:
    """Render and analyze DATED in a process whose local clock is in time_zone."""
    result = subprocess.run(
        [sys.executable, "-c", CLOCK_PROBE], input=DATED, capture_output=True, text=True,
        cwd=ROOT, env={**os.environ, "TZ": time_zone}, check=True,
    )
    now, analysis = result.stdout.splitlines()
    return now, analysis


def test_an_analysis_is_the_same_whatever_the_real_clock_says() -> None:
    # POSIX time zones 26 hours apart (UTC+14, UTC-12): the two local dates always differ.
    east_now, east = on_clock_of("EAST-14")
    west_now, west = on_clock_of("WEST+12")
    assert east_now != west_now
    assert east == west
    assert "01 Jan 2025 12:00" in east


QUEUE_TEMPLATE = (
    "{% set q = namespace(ids=[]) %}{% for m in messages %}"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}{% set _ = q.ids.append(c.id) %}"
    "<call>{{ c.function.name }}:{{ c.function.arguments|tojson }}</call>{% endfor %}"
    "{% else %}<{{ m.role }}>{{ m.content }}{% endif %}<end>{% endfor %}"
)


def test_a_template_transformers_refuses_is_analyzed_leniently_and_says_why() -> None:
    analysis = analyze(QUEUE_TEMPLATE)
    assert analysis.render_mode == RenderMode.LENIENT
    assert "access to attribute 'append' of 'list' object is unsafe" in analysis.render_note
    assert "lenient mode" in analysis.render_note
    assert analysis.caps.supports_tool_calls
    layout = analysis.tools.format
    assert (layout.per_call_start, layout.per_call_end) == ("<call>", "</call>")
    assert analysis.tools.function.name_suffix == ":"


def test_a_template_transformers_renders_is_analyzed_exactly() -> None:
    analysis = analyze((FORMATS / "tools_tagged.jinja").read_text())
    assert (analysis.render_mode, analysis.render_note) == (RenderMode.HF, "")


def test_failures_lenient_mode_cannot_avoid_keep_the_exact_mode() -> None:
    # A type error and the template's own refusal happen the same way in both modes.
    for source in ("{{ messages[0].content + 1 }}",
                   "{% if tools %}{{ raise_exception('no tools') }}{% endif %}"
                   "{% for m in messages %}{{ m.content }}{% endfor %}"):
        assert analyze(source).render_mode == RenderMode.HF
