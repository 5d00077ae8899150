"""Canonical JSON of an analysis: stable bytes, version inside, exact round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer import ANALYZER_VERSION, analysis_from_json, analysis_to_json, analyze
from analyzer.analysis.pipeline import analyze_uncached
from analyzer.canonical import CanonicalJsonError
from analyzer.render.loading import TemplateSource

FORMATS = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"


@pytest.mark.parametrize("name", ["tools_tagged", "think_forced_closed", "tools_indexed"])
def test_round_trip_rebuilds_an_equal_analysis(name: str) -> None:
    analysis = analyze((FORMATS / f"{name}.jinja").read_text())
    text = analysis_to_json(analysis)
    assert analysis_from_json(text) == analysis
    assert analysis_to_json(analysis_from_json(text)) == text


def fresh_json(source: str) -> str:
    """Analyze without the per-process caches: compile anew and render everything again."""
    return analysis_to_json(analyze_uncached(TemplateSource(source=source)))


def test_two_uncached_runs_give_identical_bytes() -> None:
    source = (FORMATS / "tools_bracket_id.jinja").read_text()
    assert fresh_json(source) == fresh_json(source)


def test_todays_date_does_not_leak_into_the_analysis() -> None:
    source = "{{ strftime_now('%d %b %Y') }}{% for m in messages %}{{ m.content }}{% endfor %}"
    text = fresh_json(source)
    assert "01 Jan 2025" in text
    assert text == fresh_json(source)


def test_keys_are_sorted_and_the_version_is_included() -> None:
    text = analysis_to_json(analyze((FORMATS / "plain.jinja").read_text()))
    data = json.loads(text)
    assert data["analyzer_version"] == ANALYZER_VERSION
    assert list(data) == sorted(data)
    assert text == json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def test_non_ascii_markers_stay_unescaped() -> None:
    source = ("{% for m in messages %}{% if m.tool_calls %}<｜calls｜>{{ m.tool_calls[0].function"
              " | tojson }}<｜end｜>{% else %}{{ m.content }}{% endif %}{% endfor %}")
    assert "<｜calls｜>" in analysis_to_json(analyze(source))


def test_invalid_json_is_refused_with_its_position() -> None:
    with pytest.raises(CanonicalJsonError) as info:
        analysis_from_json("{not json")
    assert "invalid JSON" in str(info.value) and "offset 1" in str(info.value)


def test_a_missing_field_is_named() -> None:
    data = json.loads(analysis_to_json(analyze((FORMATS / "plain.jinja").read_text())))
    del data["caps"]
    with pytest.raises(CanonicalJsonError) as info:
        analysis_from_json(json.dumps(data))
    assert "missing field 'caps' of Analysis" in str(info.value)


def test_a_wrong_enum_value_lists_the_allowed_ones() -> None:
    data = json.loads(analysis_to_json(analyze((FORMATS / "plain.jinja").read_text())))
    data["reasoning"]["mode"] = "SOMETIMES"
    with pytest.raises(CanonicalJsonError) as info:
        analysis_from_json(json.dumps(data))
    assert "$.reasoning.mode" in str(info.value) and "TAG_BASED" in str(info.value)
