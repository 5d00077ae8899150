"""The capability probe, on small templates whose behaviour is known by construction."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.analysis.caps import probe_capabilities, template_kwargs
from analyzer.analysis.variants import VariantRenderer
from analyzer.render.template import ChatTemplate

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def probe(source: str):  # type: ignore[no-untyped-def]
    return probe_capabilities(VariantRenderer(ChatTemplate(source)))


def test_a_template_without_tool_handling_supports_no_tools() -> None:
    caps = probe((FORMATS / "plain.jinja").read_text()).caps
    assert caps.supports_system_role
    assert not caps.supports_tools and not caps.supports_tool_calls
    assert not caps.supports_parallel_tool_calls


def test_a_tool_template_shows_tools_calls_results_and_parallel_calls() -> None:
    caps = probe((FORMATS / "tools_json_native.jinja").read_text()).caps
    assert caps.supports_tools and caps.supports_tool_calls
    assert caps.supports_tool_responses and caps.supports_parallel_tool_calls
    assert not caps.supports_tool_call_id  # the template never writes call.id


def test_call_ids_are_seen_when_written() -> None:
    assert probe((FORMATS / "tools_bracket_id.jinja").read_text()).caps.supports_tool_call_id


def test_a_template_that_tojsons_arguments_requires_objects() -> None:
    caps = probe((FORMATS / "tools_tag_json.jinja").read_text()).caps
    assert caps.requires_object_arguments and not caps.supports_string_arguments


def test_a_template_that_concatenates_arguments_gets_strings() -> None:
    source = ("{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}"
              "<call>{{ c.function.name + ' ' + c.function.arguments }}</call>"
              "{% endfor %}{% else %}{{ m.content }}{% endif %}{% endfor %}")
    result = probe(source)
    assert result.caps.supports_tool_calls and result.caps.supports_string_arguments
    assert result.calls.string_args


def test_typed_content_is_required_when_plain_strings_vanish() -> None:
    source = ("{% for m in messages %}{% for part in m.content %}{{ part.text }}{% endfor %}"
              "{% endfor %}")
    assert probe(source).caps.requires_typed_content


def test_non_null_content_is_required_when_none_prints() -> None:
    source = ("{% for m in messages %}{{ m.content }}{% for c in m.tool_calls or [] %}"
              "<c>{{ c.function.name }}{{ c.function.arguments | tojson }}</c>{% endfor %}"
              "{% endfor %}")
    assert probe(source).caps.requires_non_null_content


def test_template_kwargs_lists_variables_the_template_reads_but_never_sets() -> None:
    source = ("{% set x = 1 %}{% if enable_thinking %}{{ x }}{% endif %}{{ reasoning_effort }}"
              "{% for m in messages %}{{ m.content }}{% endfor %}{{ bos_token }}")
    assert template_kwargs(source) == ("enable_thinking", "reasoning_effort")


def test_variables_the_template_cannot_do_without_are_supplied_empty() -> None:
    source = "{{ 'Functions: ' + functions }}{% for m in messages %}{{ m.content }}{% endfor %}"
    result = probe(source)
    assert result.caps.template_kwargs == ("functions",)
    assert result.caps.supports_system_role


def test_seed_oss_thinking_budget_is_listed_though_the_template_sets_a_fallback() -> None:
    seed = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "templates"
    seed = seed / "ByteDance-Seed-OSS.jinja"
    if not seed.exists():
        pytest.skip(f"{seed} not found (../shared is absent)")
    assert "thinking_budget" in template_kwargs(seed.read_text(encoding="utf-8"))
