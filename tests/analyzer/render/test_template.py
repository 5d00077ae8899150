"""ChatTemplate renders with transformers' semantics and reports failures precisely."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from analyzer.errors import (
    AnalyzerError,
    InvalidInputError,
    TemplateRaisedError,
    TemplateRenderError,
)
from analyzer.render.loading import TemplateSource
from analyzer.render.template import ChatTemplate

USER = {"role": "user", "content": "Hi"}


def render(source: str, messages: list[dict[str, Any]] | None = None, **kwargs: Any) -> str:
    return ChatTemplate(source).render(messages if messages is not None else [USER], **kwargs)


def test_block_tags_trim_their_newline_and_leading_indent() -> None:
    # trim_blocks drops the newline after a tag; lstrip_blocks drops the spaces before it.
    source = (
        "{% for m in messages %}\n    {% if m.role == 'user' %}\n"
        "[{{ m.content }}]\n    {% endif %}\n{% endfor %}"
    )
    assert render(source, [USER, USER]) == "[Hi]\n[Hi]\n"


def test_a_single_trailing_newline_of_the_template_is_dropped() -> None:
    assert render("{{ messages|length }}\n") == "1"


def test_loop_controls_are_enabled() -> None:
    source = (
        "{% for i in range(10) %}{% if i == 1 %}{% continue %}{% endif %}"
        "{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}"
    )
    assert render(source) == "02"


def test_context_has_messages_tools_documents_and_generation_prompt() -> None:
    source = "{{ tools is none }} {{ documents is none }} {{ add_generation_prompt }}"
    assert render(source) == "True True False"
    documents = [{"title": "T", "text": "body"}]
    source = "{{ tools[0].name }} {{ documents[0].text }} {{ add_generation_prompt }}"
    rendered = render(
        source, tools=[{"name": "f"}], documents=documents, add_generation_prompt=True
    )
    assert rendered == "f body True"


def test_extra_kwargs_become_template_variables() -> None:
    source = "{% if enable_thinking is defined and not enable_thinking %}/no_think{% endif %}"
    assert render(source, enable_thinking=False) == "/no_think"
    assert render(source) == ""


def test_special_tokens_are_passed_and_kwargs_override_them() -> None:
    template = ChatTemplate("{{ bos_token }}|{{ eos_token }}", bos_token="<s>", eos_token="</s>")
    assert template.render([USER]) == "<s>|</s>"
    assert template.render([USER], bos_token="[BOS]") == "[BOS]|</s>"


def test_from_source_takes_the_tokens_that_came_with_the_template() -> None:
    loaded = TemplateSource(source="{{ bos_token }}{{ eos_token }}", bos_token="A", eos_token="B")
    template = ChatTemplate.from_source(loaded)
    assert (template.source, template.render([USER])) == (loaded.source, "AB")


def test_reasoning_under_any_name_is_copied_to_thinking_and_reasoning_content() -> None:
    source = "{{ messages[0].reasoning_content }}/{{ messages[0].thinking }}"
    assert render(source, [{"role": "assistant", "content": "", "reasoning": "hmm"}]) == "hmm/hmm"
    assert render(source, [{"role": "assistant", "content": "", "thinking": "hm"}]) == "hm/hm"


def test_none_values_reach_the_template_as_none() -> None:
    # render_jinja_template keeps them; only apply_chat_template drops None-valued keys.
    none_content = [{"role": "user", "content": None}]
    assert render("{{ messages[0].content is none }}", none_content) == "True"


def test_the_callers_messages_are_not_modified() -> None:
    messages = [{"role": "assistant", "content": "x", "reasoning": "r"}]
    render("{{ messages[0].thinking }}", messages)
    assert messages == [{"role": "assistant", "content": "x", "reasoning": "r"}]


class Role(str, enum.Enum):  # noqa: UP042 - str() of this mix-in gives "Role.USER", not "user"
    USER = "user"


@dataclass
class Message:
    role: str
    content: str


def test_inputs_are_converted_to_plain_data_as_transformers_does() -> None:
    assert render("{{ messages[0].role }}", [{"role": Role.USER, "content": ""}]) == "user"
    dataclass_message: Any = Message("user", "dc")
    assert render("{{ messages[0].content }}", [dataclass_message]) == "dc"
    assert render("{{ messages[0].content }}", [{"role": "user", "content": object()}]) == (
        "<object>"
    )


def test_raise_exception_becomes_template_raised_error_with_its_message_and_line() -> None:
    source = (
        "ok\n{% if messages[0].role != 'system' %}"
        "{{ raise_exception('System message required') }}{% endif %}"
    )
    with pytest.raises(TemplateRaisedError) as caught:
        render(source)
    error = caught.value
    assert (error.template_message, error.lineno) == ("System message required", 2)
    assert str(error) == (
        "line 2: the template raised an exception: System message required\n"
        "    {% if messages[0].role != 'system' %}{{ raise_exception('System message required') }}"
        "{% endif %}"
    )
    assert isinstance(error, TemplateRenderError) and isinstance(error, AnalyzerError)


def test_a_runtime_failure_names_the_python_error_and_the_template_line() -> None:
    with pytest.raises(TemplateRenderError) as caught:
        render("a\nb\n{{ messages[0].content + 1 }}")
    assert caught.value.lineno == 3
    assert str(caught.value) == (
        'line 3: TypeError: can only concatenate str (not "int") to str\n'
        "    {{ messages[0].content + 1 }}"
    )


def test_an_undefined_attribute_chain_is_a_render_error() -> None:
    expected = "UndefinedError: 'dict object' has no attribute 'x'"
    with pytest.raises(TemplateRenderError, match=expected):
        render("{{ messages[0].x.y }}")


def test_messages_must_be_dicts() -> None:
    with pytest.raises(InvalidInputError, match="each message must be a dict; found 'hello'"):
        render("{{ messages }}", ["hello"])  # type: ignore[list-item]


def test_tools_must_be_schema_dicts() -> None:
    with pytest.raises(InvalidInputError, match="each tool must be a JSON schema dict; found 3"):
        render("{{ tools }}", tools=[3])


def test_rendering_twice_gives_the_same_text() -> None:
    template = ChatTemplate("{% for m in messages %}{{ loop.index }}:{{ m.content }}{% endfor %}")
    assert template.render([USER, USER]) == template.render([USER, USER]) == "1:Hi2:Hi"


def test_a_fixed_now_is_what_strftime_now_formats() -> None:
    chat = ChatTemplate("{{ strftime_now('%Y-%m-%d %H:%M') }}", now=datetime(2024, 2, 29, 23, 5))
    assert chat.render([USER]) == "2024-02-29 23:05"
    assert chat.now == datetime(2024, 2, 29, 23, 5)


def test_without_now_strftime_now_reads_the_real_clock() -> None:
    before = datetime.now().strftime("%Y-%m-%d")
    rendered = ChatTemplate("{{ strftime_now('%Y-%m-%d') }}").render([USER])
    assert rendered in (before, datetime.now().strftime("%Y-%m-%d"))  # midnight may pass


def refusal(source: str) -> TemplateRenderError:
    with pytest.raises(TemplateRenderError) as info:
        render(source)
    return info.value


def test_refusals_only_transformers_has_are_marked_for_lenient_mode() -> None:
    append = refusal("{% set l = [] %}{{ l.append(1) }}")
    assert "access to attribute 'append' of 'list' object is unsafe" in str(append)
    assert append.lenient_allows
    generator = refusal("{{ messages|map(attribute='role')|tojson }}")
    assert "TypeError: Object of type generator is not JSON serializable" in str(generator)
    assert generator.lenient_allows


def test_refusals_lenient_mode_shares_are_not_marked() -> None:
    # The caller's messages stay read-only, other objects stay unserializable, and plain
    # runtime errors are the template's own in both modes.
    for source in ("{{ messages.append(1) }}", "{{ namespace(a=1)|tojson }}",
                   "{{ messages[0].content + 1 }}", "{{ ''.__class__.__mro__ }}"):
        assert not refusal(source).lenient_allows, source


def test_a_template_switched_to_lenient_mode_renders_as_one_compiled_lenient() -> None:
    # The list is the template's own: only lenient mode lets it append; tojson then reads it.
    source = "{% set ids = [] %}{{ ids.append(messages[0].content) or '' }}{{ ids | tojson }}"
    exact = ChatTemplate(source)
    lenient = exact.in_mode("lenient")
    assert lenient.render([USER]) == '["Hi"]'
    assert lenient.render([USER]) == ChatTemplate(source, mode="lenient").render([USER])
    with pytest.raises(TemplateRenderError) as caught:
        exact.render([USER])  # the original keeps refusing, as transformers does
    assert "append" in str(caught.value)


def test_a_lenient_template_switched_back_renders_exactly_again() -> None:
    source = "{% set ids = [] %}{{ ids.append(1) or '' }}{{ ids | length }}"
    assert ChatTemplate(source, mode="lenient").render([USER]) == "1"
    with pytest.raises(TemplateRenderError) as caught:
        ChatTemplate(source, mode="lenient").in_mode("hf").render([USER])
    assert "append" in str(caught.value)


def test_free_variables_are_those_read_before_any_constant_folding() -> None:
    # `z if false else 'a'` folds to 'a' when compiled; the template still reads z.
    source = ("{% set x = 1 %}{% macro m(a) %}{{ a }}{% endmacro %}{{ m(x) }}{{ y }}"
              "{{ z if false else 'a' }}{% for m2 in messages %}{{ m2.content }}{% endfor %}")
    assert ChatTemplate(source).free_variables == frozenset({"y", "z", "messages"})


def test_a_variable_probed_before_a_fallback_is_set_is_still_read_from_the_caller() -> None:
    # Seed-OSS: `{% if not thinking_budget is defined %}{% set thinking_budget = -1 %}`.
    source = (
        "{% if not budget is defined %}{% set budget = -1 %}{% endif %}{{ budget }}"
        "{% set mode = style | default('plain') %}{{ mode }}"
        "{% for m in messages %}{% if m is defined %}{{ m.content }}{% endif %}{% endfor %}"
        "{% macro show(x) %}{{ x if x is defined }}{% endmacro %}{{ show(1) }}"
    )
    assert ChatTemplate(source).free_variables == frozenset({"budget", "style", "messages"})
