"""The sandbox refuses escapes, and its instrumentation leaves template semantics alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jinja2.compiler import CodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment

from analyzer.errors import SandboxViolationError, TemplateRenderError
from analyzer.render.limits import RenderLimits
from analyzer.render.sandbox import BoundedEnvironment
from analyzer.render.template import ChatTemplate

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "templates"


def render(source: str, **kwargs: Any) -> str:
    return ChatTemplate(source).render([{"role": "user", "content": "Hi"}], **kwargs)


def violation(source: str) -> SandboxViolationError:
    with pytest.raises(SandboxViolationError) as caught:
        render(source)
    return caught.value


def test_class_and_mro_access_is_refused() -> None:
    error = violation("{{ ''.__class__.__mro__ }}")
    assert error.reason == "access to attribute '__class__' of 'str' object is unsafe."
    assert str(error) == (
        "line 1: the sandbox refused an unsafe operation: access to attribute '__class__' of"
        " 'str' object is unsafe.\n    {{ ''.__class__.__mro__ }}"
    )


def test_reaching_subclasses_through_mro_is_refused() -> None:
    error = violation("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    assert "'__class__'" in error.reason


def test_function_globals_are_unreachable() -> None:
    error = violation("{{ raise_exception.__globals__['os'] }}")
    assert error.reason == "access to attribute '__globals__' of 'function' object is unsafe."


def test_mutating_a_list_is_refused_as_in_transformers() -> None:
    error = violation("{% set l = [] %}{% set _ = l.append(1) %}")
    assert error.reason == "access to attribute 'append' of 'list' object is unsafe."


def test_underscore_namespace_attributes_are_refused_as_in_transformers() -> None:
    error = violation("{% set ns = namespace() %}{% set ns._x = 1 %}")
    assert error.reason == "namespace attribute names may not start with an underscore; found '_x'"
    error = violation("{% set ns = namespace(_y=2) %}")
    assert error.reason.endswith("found '_y'")


def test_an_unsafe_value_is_only_refused_when_used() -> None:
    # Jinja returns an undefined for unsafe attributes: testing or printing it gives nothing,
    # as in transformers; reaching through it raises.
    assert render("{% if ''.__class__ %}yes{% else %}no{% endif %}[{{ ''.__class__ }}]") == "no[]"


def test_a_sandbox_violation_is_a_render_error() -> None:
    assert isinstance(violation("{{ ''.__class__.__base__ }}"), TemplateRenderError)


def test_loop_variables_still_work_through_the_deadline_wrapper() -> None:
    source = (
        "{% for x in tools %}{{ loop.index }}/{{ loop.length }}{% if loop.first %}F{% endif %}"
        "{% if loop.last %}L{% endif %}{{ loop.previtem or '-' }}{{ loop.nextitem or '-' }}"
        "{{ loop.cycle('a', 'b') }};{% endfor %}"
    )
    assert render(source, tools=[{"n": 1}, {"n": 2}, {"n": 3}]) == (
        "1/3F-{'n': 2}a;2/3{'n': 1}{'n': 3}b;3/3L{'n': 2}-a;"
    )


def test_loops_over_dicts_generators_and_filters_are_unchanged() -> None:
    assert render("{% for k, v in {'a': 1}.items() %}{{ k }}={{ v }}{% endfor %}") == "a=1"
    assert render("{% for x in [3, 1, 2]|sort if x > 1 %}{{ x }}{{ loop.length }}{% endfor %}") == (
        "2232"
    )
    assert render("{% for x in [1, 2]|map('string') %}{{ x }}{{ loop.length }}{% endfor %}") == (
        "1222"
    )
    assert render("{% for x in [] %}a{% else %}empty{% endfor %}") == "empty"


def test_recursive_loops_still_work() -> None:
    source = "{% for n in tree recursive %}({{ n.name }}{{ loop(n.kids) }}){% endfor %}"
    tree = [{"name": "a", "kids": [{"name": "b", "kids": []}]}]
    assert render(source, tree=tree) == "(a(b))"


def test_concatenation_converts_like_jinja() -> None:
    assert render("{{ 1 ~ none ~ 'x' ~ [2] ~ undefined_name }}") == "1Nonex[2]"


def test_autoescape_blocks_still_escape_output_and_concatenation() -> None:
    source = "{% autoescape true %}{{ '<b>' }}{{ '<i>' ~ 'x' }}{{ '<u>'|safe }}{% endautoescape %}"
    assert render(source) == "&lt;b&gt;&lt;i&gt;x<u>"


def test_markup_format_still_escapes_its_arguments() -> None:
    assert render("{{ ('<p>{}</p>'|safe).format('<x>') }}") == "<p>&lt;x&gt;</p>"


def test_format_map_works() -> None:
    assert render("{{ '{a}-{b}'.format_map({'a': 1, 'b': 2}) }}") == "1-2"


def test_undefined_values_print_as_empty_text() -> None:
    assert render("[{{ nothing }}][{{ messages[0].missing }}]") == "[][]"


def jinja_code(source: str, generator: type[CodeGenerator] | None = None) -> str:
    env = BoundedEnvironment(RenderLimits())
    if generator is not None:
        env.code_generator_class = generator
    code = env.compile(source, raw=True)
    assert isinstance(code, str)
    return code


def test_folding_each_subtree_once_writes_the_code_jinja_writes() -> None:
    source = ("{{ ((1 + 2) * 3) // 2 }}{% if messages %}{{ [1, [2, 3]] | length }}"
              "{{ (x if false else 'y') | upper }}{% endif %}")
    ours = jinja_code(source)
    assert "'Y'" in ours  # the constant expressions are still folded
    assert ours == jinja_code(source, CodeGenerator)
    # Folding depends on the evaluation context (autoescape), which blocks and macros change.
    escaping = ("{% autoescape true %}{{ ('<b>' if true else y) | upper }}{% endautoescape %}"
                "{% macro m(a) %}{% autoescape false %}{{ a ~ ('<x>' | upper) }}"
                "{% endautoescape %}{% endmacro %}{{ m(1) }}{{ '<c>' | upper }}")
    assert jinja_code(escaping) == jinja_code(escaping, CodeGenerator)


def test_every_corpus_template_compiles_to_the_code_jinja_writes() -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    for path in sorted(CORPUS.glob("*.jinja")):
        source = path.read_text(encoding="utf-8")
        assert jinja_code(source) == jinja_code(source, CodeGenerator), path.name


def test_attribute_syntax_on_a_dict_reads_the_item_unless_dict_has_that_attribute() -> None:
    source = ("{% set m = messages[0] %}{{ m.content }}|{{ m.missing is defined }}|"
              "{{ m.items is callable }}|{{ m['items'] }}|{{ m.get('role') }}")
    messages = [{"role": "user", "content": "Hi", "items": "the item"}]
    expected = ImmutableSandboxedEnvironment().from_string(source).render(messages=messages)
    assert expected == "Hi|False|True|the item|user"
    assert ChatTemplate(source).render(messages) == expected


def test_remembered_attribute_checks_answer_per_type_and_name_as_jinja_does() -> None:
    source = "{{ x.get is defined }} {{ x.clear is defined }} {{ x.upper is defined }}"
    chat = ChatTemplate(source)
    jinja = ImmutableSandboxedEnvironment().from_string(source)
    for value in ({}, "abc", [], {"clear": 1}, "xyz"):
        ours = chat.render([{"role": "user", "content": "Hi"}], x=value)
        assert ours == jinja.render(x=value), value
    assert chat.render([], x={}) == "True False False"  # a dict's clear() changes it in place
    assert chat.render([], x="abc") == "False False True"
