"""Rendering is bounded: runaway loops, recursion and huge strings stop with RenderLimitError."""

from __future__ import annotations

import time

import pytest

from analyzer.errors import RenderLimitError, TemplateRenderError
from analyzer.render.limits import Budget, LimitExceeded, RenderLimits, text_size
from analyzer.render.template import ChatTemplate

QUICK = RenderLimits(max_seconds=0.2)


def limit_error(source: str, limits: RenderLimits = QUICK) -> RenderLimitError:
    with pytest.raises(RenderLimitError) as caught:
        ChatTemplate(source, limits=limits).render([{"role": "user", "content": "Hi"}])
    return caught.value


def test_nested_range_loops_with_empty_bodies_hit_the_time_limit() -> None:
    error = limit_error(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    )
    assert (error.limit, error.allowed, error.lineno) == ("time", 0.2, 1)
    assert str(error).startswith("line 1: rendering took longer than 0.2 s\n    {% for i in")


def test_loops_over_a_long_string_hit_the_time_limit() -> None:
    source = "{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}"
    assert limit_error(source).limit == "time"


def test_exponential_macro_recursion_hits_the_time_limit() -> None:
    source = (
        "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
        "{{ f(60) }}"
    )
    assert limit_error(source).limit == "time"


def test_a_huge_range_is_refused_before_looping() -> None:
    error = limit_error("{% for i in range(10**9) %}{% endfor %}")
    assert (error.limit, error.allowed) == ("range", 100_000)
    assert error.message == "range() of 1,000,000,000 items; the limit is 100,000"


def test_the_range_limit_is_configurable() -> None:
    source = "{{ range(11)|length }}"
    assert limit_error(source, RenderLimits(max_range=10)).limit == "range"
    assert ChatTemplate(source, limits=RenderLimits(max_range=11)).render([]) == "11"


def test_deep_macro_recursion_hits_the_recursion_limit() -> None:
    error = limit_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
    assert (error.limit, error.allowed) == ("recursion", 100)
    assert error.message == "calls nested more than 100 deep (runaway recursion?)"


def test_a_recursive_loop_that_never_ends_hits_the_recursion_limit() -> None:
    source = "{% set d = [[]] %}{% for x in d recursive %}{{ loop(d) }}{% endfor %}"
    assert limit_error(source).limit == "recursion"


def test_pythons_own_recursion_limit_is_reported_as_recursion() -> None:
    unlimited_depth = RenderLimits(max_seconds=5, max_call_depth=10**6)
    error = limit_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", unlimited_depth)
    assert error.limit == "recursion"
    assert "Python's recursion limit was hit" in str(error)


def test_repeating_a_string_into_gigabytes_is_refused_before_allocating() -> None:
    error = limit_error("{% set big = 'a' * 10**10 %}")
    assert (error.limit, error.allowed) == ("output_size", 2_000_000)
    assert error.message == (
        "the repeated sequence would be about 10,000,000,000 characters; the limit is 2,000,000"
    )


def test_doubling_a_string_in_a_loop_is_stopped() -> None:
    for operator in ("~", "+"):
        source = (
            "{% set ns = namespace(s='x') %}{% for i in range(100) %}"
            f"{{% set ns.s = ns.s {operator} ns.s %}}{{% endfor %}}"
        )
        error = limit_error(source)
        assert error.limit == "output_size"
        assert "concatenation would be about 2,097,152 characters" in error.message


def test_a_huge_join_is_refused() -> None:
    error = limit_error("{{ range(100000)|join('x' * 1000000) }}")
    assert error.limit == "output_size"
    assert error.message.startswith("the joined string would be about 99,999,")


def test_the_str_join_method_is_checked_too() -> None:
    error = limit_error("{{ ('x' * 100000).join(['a'] * 1000) }}")
    assert error.message.startswith("the joined string would be about 99,90")


def test_text_accumulated_inside_a_macro_counts_against_the_output_limit() -> None:
    source = (
        "{% macro m() %}{% for i in range(100000) %}{{ 'y' * 100000 }}{% endfor %}{% endmacro %}"
        "{{ m()|length }}"
    )
    error = limit_error(source)
    assert error.limit == "output_size"
    assert error.message.startswith("the template produced more than 2,000,000 characters of text")


def test_literal_text_in_a_loop_counts_against_the_output_limit() -> None:
    source = "{% for i in range(100000) %}" + "L" * 100 + "{% endfor %}"
    assert limit_error(source, RenderLimits(max_output_chars=5000)).limit == "output_size"


def test_the_output_limit_is_configurable() -> None:
    source = "{{ 'x' * 100 }}"
    assert limit_error(source, RenderLimits(max_output_chars=99)).limit == "output_size"
    assert ChatTemplate(source, limits=RenderLimits(max_output_chars=100)).render([]) == "x" * 100


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("{{ 'x'|center(10**10) }}", "the centered string"),
        ("{{ 'x'.center(10**10) }}", "str.center()"),
        ("{{ 'x'.zfill(10**10) }}", "str.zfill()"),
        ("{{ '{:>10000000000}'.format(1) }}", "the formatted string"),
        ("{{ '%10000000000d' % 1 }}", "the formatted string"),
        ("{{ '%*d'|format(10**10, 1) }}", "the formatted string"),
        ("{{ ('x' * 100000).replace('x', 'y' * 100000) }}", "the replaced string"),
        ("{{ ('x' * 100000)|replace('x', 'y' * 100000) }}", "the replaced string"),
        ("{{ ('\n' * 100000)|indent(100000, blank=True) }}", "the indented string"),
        ("{{ ('x' * 1000000).translate({120: 'y' * 1000000}) }}", "str.translate()"),
        ("{% set l = range(100000)|list %}{{ [" + "l," * 20 + "l]|sum(start=[]) }}",
         "the summed sequence"),
        ("{% set l = range(100000)|list %}{{ [" + "l," * 14 + "l]|string }}", "the string"),
        # `[a] * n` is n references, but `==`, printing or tojson walk n copies of `a` in C.
        ("{% set a = [0] * 100000 %}{{ [a] * 1000 == [a] * 1000 }}", "the repeated sequence"),
        ("{{ [[0] * 1000] * 100000 }}", "the repeated sequence"),
    ],
)
def test_size_amplifying_operations_are_checked_before_they_run(source: str, what: str) -> None:
    error = limit_error(source)
    assert error.limit == "output_size"
    assert error.message.startswith(f"{what} would be about ")


def test_huge_integer_powers_are_refused() -> None:
    error = limit_error("{{ 9 ** (9 ** 9) }}")
    assert error.limit == "output_size"
    assert error.message.startswith("an integer of about 480,401,")


def test_a_graph_of_shared_lists_cannot_be_serialized_into_gigabytes() -> None:
    source = (
        "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}"
        "{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l|tojson }}"
    )
    error = limit_error(source)
    assert error.message.startswith("the tojson output would be about 2,000,")


def test_printing_a_graph_of_shared_lists_is_stopped() -> None:
    source = (
        "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}"
        "{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}"
    )
    assert limit_error(source).limit == "output_size"


def test_a_huge_tojson_indent_is_refused() -> None:
    error = limit_error("{{ [[1]]|tojson(indent=10**9) }}")
    assert error.message == "tojson indent of 1,000,000,000 characters; the limit is 1,000"


def test_padding_and_slicing_counts_are_capped_like_range() -> None:
    assert limit_error("{{ [1]|batch(10**10, 0)|list|length }}").limit == "range"
    assert limit_error("{{ [1]|slice(10**9)|list|length }}").limit == "range"
    assert limit_error("{{ lipsum(10**8) }}").limit == "range"


def test_a_limit_error_is_a_render_error() -> None:
    assert isinstance(limit_error("{{ 'a' * 10**10 }}"), TemplateRenderError)


def test_ordinary_templates_are_unaffected_by_the_checks() -> None:
    source = (
        "{% for m in messages %}{{ '<|' + m.role + '|>' ~ m.content ~ loop.length }}"
        "{% if loop.last %}{{ '%s!' % 'end' }}{{ '{}?'.format(1) }}{% endif %}{% else %}none"
        "{% endfor %}{{ ['a', 'b']|join(', ') }}"
    )
    rendered = ChatTemplate(source).render([{"role": "user", "content": "Hi"}])
    assert rendered == "<|user|>Hi1end!1?a, b"


def test_text_size_estimates_str_length_and_stops_past_the_cap() -> None:
    assert text_size("abc", 10) == 3
    assert text_size(["ab", {"k": "v"}], 100) >= len(str(["ab", {"k": "v"}])) - 4
    shared: list[object] = [1]
    for _ in range(60):
        shared = [shared, shared]
    assert 100 < text_size(shared, 100) < 1000


def test_filters_that_loop_in_python_refuse_inputs_longer_than_the_item_limit() -> None:
    error = limit_error("{{ ('x' * 1900000)|map('string')|join }}")
    assert (error.limit, error.allowed) == ("range", 100_000)
    assert error.message == "the map filter over 1,900,000 items; the limit is 100,000"
    assert limit_error("{{ ('x' * 1900000)|list|sort|length }}").message.startswith(
        "the sort filter over 1,900,000 items"
    )


def test_chained_growing_filters_are_held_to_the_size_limit() -> None:
    error = limit_error("{{ ('é' * 1000000)|urlencode|urlencode|length }}")
    assert error.limit == "output_size"
    assert error.message == (
        "the urlencode filter's result would be about 6,000,000 characters; the limit is 2,000,000"
    )


def test_an_oversized_template_is_refused_before_compiling() -> None:
    with pytest.raises(RenderLimitError) as caught:
        ChatTemplate("{{ a }}" * 20_000)
    error = caught.value
    assert (error.limit, error.allowed) == ("template_size", 100_000)
    assert str(error) == "the template is 140,000 characters; the limit is 100,000"
    assert ChatTemplate("{{ a }}" * 20_000, limits=RenderLimits(max_template_chars=140_000))


def test_nesting_too_deep_to_compile_is_a_recursion_limit() -> None:
    with pytest.raises(RenderLimitError) as caught:
        ChatTemplate("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}")
    assert caught.value.limit == "recursion"
    assert str(caught.value) == "the template nests blocks or expressions too deeply to compile"



def test_time_spent_waiting_for_the_cpu_does_not_count_against_the_time_limit() -> None:
    # On a busy machine the wall-clock deadline passes while the render waits for the CPU:
    # the limit counts the CPU time the render used, so the same template renders the same way.
    budget = Budget(QUICK, deadline=time.perf_counter() - 0.1)  # wall time is up, CPU is not
    budget.tick()
    assert budget.deadline > time.perf_counter()


def test_a_render_that_used_its_cpu_time_stops() -> None:
    budget = Budget(QUICK, deadline=time.perf_counter() - 0.1)
    budget.cpu_start -= QUICK.max_seconds  # as if it had computed for its whole allowance
    with pytest.raises(LimitExceeded, match=r"rendering took longer than 0.2 s"):
        budget.tick()


def test_a_starved_render_still_stops_at_its_wall_clock_cap() -> None:
    budget = Budget(QUICK, deadline=time.perf_counter() - 0.1)
    budget.wall_cap = time.perf_counter() - 0.01
    with pytest.raises(LimitExceeded):
        budget.tick()
