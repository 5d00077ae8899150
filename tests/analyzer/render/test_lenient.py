"""Lenient mode: llama.cpp's extras (in-place list/dict changes, tojson of generators), bounded."""

from __future__ import annotations

from typing import Any

import pytest

from analyzer.errors import (
    InvalidInputError,
    RenderLimitError,
    SandboxViolationError,
    TemplateRenderError,
)
from analyzer.model import RenderMode
from analyzer.render.template import ChatTemplate

MESSAGES = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]
QUEUE = (
    "{% set q = namespace(ids=[]) %}{% for m in messages %}{% set _ = q.ids.append(m.role) %}"
    "{% endfor %}{{ q.ids.pop(0) }}|{{ q.ids }}"
)


def lenient(source: str, messages: list[dict[str, Any]] | None = None, **kwargs: Any) -> str:
    chat = ChatTemplate(source, mode=RenderMode.LENIENT)
    return chat.render(MESSAGES if messages is None else messages, **kwargs)


def test_a_list_the_template_built_can_be_appended_to_and_popped() -> None:
    assert lenient(QUEUE) == "user|['assistant']"


def test_the_exact_mode_refuses_the_same_append_as_transformers() -> None:
    with pytest.raises(SandboxViolationError) as info:
        ChatTemplate(QUEUE).render(MESSAGES)
    assert "access to attribute 'append' of 'list' object is unsafe" in str(info.value)


def test_the_mode_is_given_as_a_string_too() -> None:
    assert ChatTemplate(QUEUE, mode="lenient").mode is RenderMode.LENIENT
    assert ChatTemplate(QUEUE).mode is RenderMode.HF


def test_an_unknown_mode_is_refused_with_the_known_ones() -> None:
    with pytest.raises(InvalidInputError) as info:
        ChatTemplate(QUEUE, mode="llama")
    assert str(info.value) == "the render mode must be 'hf' or 'lenient'; found 'llama'"


def test_a_dict_the_template_built_can_be_updated() -> None:
    source = "{% set d = dict(a=1) %}{% set _ = d.update(b=2) %}{{ d.setdefault('c', 3) }}{{ d }}"
    assert lenient(source) == "3{'a': 1, 'b': 2, 'c': 3}"


def test_the_callers_data_stays_read_only() -> None:
    for source in (
        "{{ messages.append(1) }}",
        "{{ messages[0].update(role='x') }}",
        "{{ tools.pop() }}",
    ):
        with pytest.raises(SandboxViolationError) as info:
            lenient(source, tools=[{"type": "function"}])
        assert "object is unsafe" in str(info.value)


def test_a_copy_of_the_callers_list_may_change() -> None:
    assert lenient("{% set rest = messages[1:] %}{{ rest.pop().role }}{{ rest|length }}") == (
        "assistant0"
    )


def test_a_list_made_in_one_render_does_not_leak_into_the_next() -> None:
    chat = ChatTemplate("{% set l = [] %}{% set _ = l.append(1) %}{{ l }}", mode=RenderMode.LENIENT)
    assert chat.render(MESSAGES) == chat.render(MESSAGES) == "[1]"


def test_python_internals_are_still_refused() -> None:
    with pytest.raises(SandboxViolationError) as info:
        lenient("{% set l = [] %}{{ l.__class__.__mro__ }}")
    assert "'__class__'" in str(info.value)


def test_a_list_that_doubles_itself_stops_at_the_item_limit() -> None:
    source = "{% set l = [1] %}{% for i in range(40) %}{% set _ = l.extend(l) %}{% endfor %}"
    with pytest.raises(RenderLimitError) as info:
        lenient(source)
    assert "list.extend() to a size of 131,072 items; the limit is 100,000" in str(info.value)


def test_appending_while_looping_over_the_list_stops() -> None:
    source = "{% set l = [1] %}{% for x in l %}{% set _ = l.append(x) %}{% endfor %}"
    with pytest.raises(RenderLimitError) as info:
        lenient(source)
    assert info.value.limit in ("range", "time")


def test_extend_takes_a_generator_once() -> None:
    source = "{% set l = [] %}{% set _ = l.extend(messages|map(attribute='role')) %}{{ l }}"
    assert lenient(source) == "['user', 'assistant']"


def test_tojson_writes_a_map_result_as_a_list() -> None:
    assert lenient("{{ messages|map(attribute='role')|tojson }}") == '["user", "assistant"]'
    assert lenient("{{ messages|map(attribute='role')|tojson(indent=1) }}") == (
        '[\n "user",\n "assistant"\n]'
    )


def test_tojson_writes_nested_generators_as_lists() -> None:
    source = "{{ {'roles': messages|map(attribute='role')}|tojson }}"
    assert lenient(source) == '{"roles": ["user", "assistant"]}'


def test_the_exact_mode_cannot_serialize_a_generator() -> None:
    with pytest.raises(TemplateRenderError) as info:
        ChatTemplate("{{ messages|map(attribute='role')|tojson }}").render(MESSAGES)
    assert "Object of type generator is not JSON serializable" in str(info.value)


def test_tojson_still_refuses_other_python_objects() -> None:
    with pytest.raises(TemplateRenderError) as info:
        lenient("{{ namespace(a=1)|tojson }}")
    assert "Object of type TemplateNamespace is not JSON serializable" in str(info.value)


def test_a_generator_of_huge_strings_is_refused_before_it_is_written() -> None:
    source = "{{ range(30)|map('string')|map('center', 100000)|tojson }}"
    with pytest.raises(RenderLimitError) as info:
        lenient(source)
    assert "the tojson output" in str(info.value)
