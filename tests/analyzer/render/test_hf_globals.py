"""The globals and filters transformers gives chat templates behave as they do there."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from analyzer.errors import TemplateRaisedError, TemplateRenderError
from analyzer.render.hf_globals import fixed_strftime_now
from analyzer.render.limits import RenderLimits
from analyzer.render.sandbox import BoundedEnvironment
from analyzer.render.template import ChatTemplate

USER = {"role": "user", "content": "Hi"}


def render(source: str, messages: list[dict[str, Any]] | None = None, **kwargs: Any) -> str:
    return ChatTemplate(source).render(messages if messages is not None else [USER], **kwargs)


def test_tojson_keeps_non_ascii_and_html_characters() -> None:
    assert render("{{ messages[0]|tojson }}", [{"role": "user", "content": "été <b>&'"}]) == (
        '{"role": "user", "content": "été <b>&\'"}'
    )


def test_tojson_accepts_indent_separators_and_sort_keys() -> None:
    value = [{"b": 1, "a": [2]}]
    assert render("{{ tools|tojson(indent=2, sort_keys=True) }}", tools=value) == (
        '[\n  {\n    "a": [\n      2\n    ],\n    "b": 1\n  }\n]'
    )
    assert render("{{ tools|tojson(separators=(',', ':')) }}", tools=value) == '[{"b":1,"a":[2]}]'
    assert render("{{ tools|tojson(ensure_ascii=True) }}", tools=[{"k": "é"}]) == (
        '[{"k": "\\u00e9"}]'
    )


def test_strftime_now_formats_the_current_time() -> None:
    assert render("{{ strftime_now('%Y') }}") == datetime.now().strftime("%Y")


def test_the_generation_tag_renders_its_body() -> None:
    source = (
        "{% for m in messages %}{% generation %}<{{ m.content }}>{% endgeneration %}{% endfor %}"
    )
    assert render(source) == "<Hi>"


def test_dict_and_namespace_globals_work_like_transformers() -> None:
    source = (
        "{% set ns = namespace(n=0) %}{% set ns.n = ns.n + 2 %}{{ ns.n }}"
        " {{ dict(a=1) }} {{ dict.fromkeys(['k']) }}"
    )
    assert render(source) == "2 {'a': 1} {'k': None}"


def test_raise_exception_turns_any_argument_into_its_message() -> None:
    with pytest.raises(TemplateRaisedError) as caught:
        render("{{ raise_exception(42) }}")
    assert caught.value.template_message == "42"


def test_namespace_accepts_a_mapping_and_an_attribute_named_self() -> None:
    assert render("{% set ns = namespace({'a': 1}, self=2) %}{{ ns.a }}{{ ns.self }}") == "12"


def test_tojson_of_an_undefined_value_is_a_render_error() -> None:
    with pytest.raises(TemplateRenderError, match="TypeError: Object of type Undefined"):
        render("{{ missing|tojson }}")


def test_a_fixed_strftime_now_exposes_no_clock_internals() -> None:
    strftime_at = fixed_strftime_now(datetime(2025, 1, 1, 12, 0))
    assert strftime_at("%d %b %Y") == "01 Jan 2025"
    env = BoundedEnvironment(RenderLimits(), now=datetime(2025, 1, 1, 12, 0))
    # A closure, not functools.partial: there is no `.func` or `.args` for a template to read.
    assert env.from_string("[{{ strftime_now.func }}{{ strftime_now.args }}]").render() == "[]"
