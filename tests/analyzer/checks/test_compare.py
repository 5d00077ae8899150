"""Comparing two templates: line-level source diff, analysis fields, canonical renders."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.checks.compare import (
    compare_templates,
    comparison_to_json,
    source_diff,
    unified_source_diff,
)
from analyzer.render.loading import TemplateSource, load_template_file

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def test_the_source_diff_numbers_each_line_on_its_side() -> None:
    lines = source_diff("a\nb\nc", "a\nB\nc\nd")
    assert [(x.op, x.text, x.line_a, x.line_b) for x in lines] == [
        (" ", "a", 1, 1), ("-", "b", 2, None), ("+", "B", None, 2), (" ", "c", 3, 3),
        ("+", "d", None, 4)]


def test_a_template_compared_with_itself_shows_no_difference() -> None:
    template = load_template_file(FORMATS / "tools_tagged.jinja")
    comparison = compare_templates(template, template)
    assert comparison.same_source and comparison.analysis == ()
    assert comparison.behaviour and comparison.behaviour_changes == ()
    assert all(line.op == " " for line in comparison.source)
    assert unified_source_diff(comparison) == ""


def test_forcing_reasoning_open_shows_in_all_three_diffs() -> None:
    old = load_template_file(FORMATS / "think_tag_based.jinja")
    new = load_template_file(FORMATS / "think_forced_open.jinja")
    comparison = compare_templates(old, new, name_a="old", name_b="new")
    fields = {change.field: change for change in comparison.analysis}
    assert (fields["reasoning.mode"].before, fields["reasoning.mode"].after) == (
        "TAG_BASED", "FORCED_OPEN")
    assert any(line.op != " " for line in comparison.source)
    assert "--- old" in unified_source_diff(comparison)
    thinking_on = next(c for c in comparison.behaviour if c.name == "thinking on")
    assert not thinking_on.same and thinking_on.diff is not None
    d = thinking_on.diff
    assert (d.prefix + d.left + d.suffix, d.prefix + d.right + d.suffix) == (
        thinking_on.left, thinking_on.right)


def test_a_render_one_template_refuses_is_a_behaviour_difference() -> None:
    renders = TemplateSource(source="{% for m in messages %}{{ m.content }}{% endfor %}")
    refuses = TemplateSource(source="{% for m in messages %}{% if m.tool_calls %}"
                             "{{ raise_exception('no calls here') }}{% endif %}"
                             "{{ m.content }}{% endfor %}")
    comparison = compare_templates(renders, refuses)
    call = next(c for c in comparison.behaviour if c.name == "tool call")
    assert not call.same and call.diff is None
    assert call.left_error == "" and "no calls here" in call.right_error
    assert json.loads(call.request)["messages"][1]["tool_calls"][0]["function"]["name"] == \
        "get_weather"


def test_the_json_is_canonical() -> None:
    a = load_template_file(FORMATS / "tools_json_native.jinja")
    b = load_template_file(FORMATS / "tools_tagged.jinja")
    text = comparison_to_json(compare_templates(a, b))
    assert text == comparison_to_json(compare_templates(a, b))
    data = json.loads(text)
    assert {"source", "analysis", "behaviour", "sha256_a", "sha256_b"} <= data.keys()
    assert any(change["field"] == "tools.format.mode" for change in data["analysis"])
