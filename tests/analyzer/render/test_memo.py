"""RenderMemo: a compiled template's renders, remembered by their inputs within a budget."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from analyzer.errors import TemplateRaisedError
from analyzer.render.memo import RenderMemo
from analyzer.render.template import ChatTemplate

CLOCK = datetime(2025, 1, 1, 12, 0, 0)
USER = {"role": "user", "content": "Hi"}
LOOP = "{% for m in messages %}[{{ m.role }}: {{ m.content }}]{% endfor %}{{ x }}"


def test_a_template_on_a_fixed_clock_renders_the_same_inputs_once() -> None:
    template = ChatTemplate(LOOP, now=CLOCK)
    first = template.render([USER, USER], x="!")
    assert first == "[user: Hi][user: Hi]!"
    assert template.render([USER, USER], x="!") is first  # the text remembered, not rerendered
    assert template.render([USER], x="!") == "[user: Hi]!"


def test_a_template_on_the_current_time_renders_every_time() -> None:
    template = ChatTemplate(LOOP)
    first = template.render([USER, USER], x="!")
    assert template.render([USER, USER], x="!") is not first
    assert template.render([USER, USER], x="!") == first


def test_a_twin_in_another_mode_or_clock_does_not_share_the_renders() -> None:
    template = ChatTemplate("{{ strftime_now('%Y') }}", now=CLOCK)
    assert template.render([USER]) == "2025"
    assert template.at_clock(datetime(2030, 1, 1)).render([USER]) == "2030"


@pytest.mark.parametrize(("first", "second"), [
    (1, True), (1, 1.0), ([1, 2], (1, 2)), ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
])
def test_inputs_the_template_can_tell_apart_are_never_confused(first: Any, second: Any) -> None:
    source = "{{ x is sameas true }} {{ x }} {% if x is mapping %}{{ x|list }}{% endif %}"
    template = ChatTemplate(source, now=CLOCK)
    fresh = ChatTemplate(source, now=CLOCK)
    template.render([USER], x=first)
    assert template.render([USER], x=second) == fresh.render([USER], x=second)


def test_a_failed_render_fails_again() -> None:
    template = ChatTemplate("{{ raise_exception('no') }}", now=CLOCK)
    for _ in range(2):
        with pytest.raises(TemplateRaisedError):
            template.render([USER])


def test_the_memo_forgets_the_oldest_renders_past_its_budget() -> None:
    memo = RenderMemo(max_chars=25)  # key and text count: each entry is 10 characters
    memo.put("a", "x" * 9)
    memo.put("b", "y" * 9)
    assert memo.get("a") == "x" * 9  # now the latest used
    memo.put("c", "z" * 9)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == ("x" * 9, None, "z" * 9)


def test_a_render_larger_than_the_budget_is_not_kept() -> None:
    memo = RenderMemo(max_chars=30)
    memo.put("a", "x" * 40)
    assert memo.get("a") is None and len(memo) == 0
