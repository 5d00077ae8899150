"""Canonical render inputs, the caching renderer and compare_variants."""

from __future__ import annotations

import json

from analyzer.analysis.variants import (
    ASSISTANT_MSG,
    CallFactory,
    VariantRenderer,
    assistant,
    compare_variants,
    render_input,
    user,
)
from analyzer.render.template import ChatTemplate

ECHO = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}"
REFUSE = "{% if messages | length > 1 %}{{ raise_exception('one message only') }}{% endif %}ok"


def test_render_inputs_are_canonical_json_with_unset_thinking_left_out() -> None:
    inp = render_input("x", [user("hi")], enable_thinking=None)
    params = json.loads(inp.params)
    assert params["kwargs"] == {}
    assert params["messages"] == [{"role": "user", "content": "hi"}]
    assert render_input("y", [user("hi")], enable_thinking=None).params == inp.params


def test_compare_variants_diffs_two_renders() -> None:
    renderer = VariantRenderer(ChatTemplate(ECHO))
    a = render_input("one", [user("hello")])
    b = render_input("two", [user("hello"), assistant()])
    comparison = compare_variants(renderer, "X1", "title", a, b)
    assert comparison.status == "ok"
    assert comparison.diff is not None
    assert comparison.diff.left == ""
    assert comparison.diff.right == f"<assistant>{ASSISTANT_MSG}</assistant>"
    assert comparison.variant_a is not None and comparison.variant_a.label == "one"


def test_a_refused_variant_marks_the_comparison_unsupported_with_the_templates_message() -> None:
    renderer = VariantRenderer(ChatTemplate(REFUSE))
    a = render_input("one", [user()])
    b = render_input("two", [user(), assistant()])
    comparison = compare_variants(renderer, "X2", "title", a, b)
    assert comparison.status == "unsupported"
    assert comparison.note == "one message only"
    assert comparison.diff is None
    assert comparison.variant_a is not None and comparison.variant_a.rendered == "ok"


def test_each_distinct_input_renders_once() -> None:
    renderer = VariantRenderer(ChatTemplate(ECHO))
    renderer.render(render_input("first label", [user("a")]))
    renderer.render(render_input("second label", [user("a")]))
    renderer.render(render_input("third", [user("b")]))
    assert len(renderer.cache) == 2


def test_call_factory_passes_arguments_as_object_or_json_string() -> None:
    as_object = CallFactory().call(args={"k": "v"})
    as_string = CallFactory(string_args=True).call(args={"k": "v"})
    assert as_object["function"]["arguments"] == {"k": "v"}
    assert as_string["function"]["arguments"] == '{"k": "v"}'
