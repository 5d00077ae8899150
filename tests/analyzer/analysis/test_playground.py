"""The render playground: any conversation rendered as transformers does, and two renders diffed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from analyzer.analysis.playground import (
    RenderRequest,
    diff_renders,
    render_conversation,
)
from analyzer.errors import InvalidInputError, TemplateRaisedError
from analyzer.model import RenderMode
from analyzer.render.loading import TemplateSource, load_template_file

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
CALL = {"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": "Need the tool.",
     "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "21 C"},
]
CONTINUED = [{"role": "user", "content": "Hi"},
             {"role": "assistant", "content": "Hello, I am", "reasoning_content": "Greet."}]
QWEN3 = CORPUS / "Qwen-Qwen3-0.6B.jinja"
needs_corpus = pytest.mark.skipif(not QWEN3.is_file(),
                                  reason="../shared/corpus/templates is not available")


def hf_render(source: TemplateSource, messages: list[dict[str, Any]], **options: Any) -> str:
    """Render with transformers' own renderer (the reference)."""
    hf_utils = pytest.importorskip("transformers.utils.chat_template_utils",
                                   reason="transformers is not installed")
    rendered, _ = hf_utils.render_jinja_template(
        conversations=[messages], chat_template=source.source, bos_token=source.bos_token,
        eos_token=source.eos_token, **options)
    return str(rendered[0])


@needs_corpus
@pytest.mark.parametrize("name", ["Qwen-Qwen3-0.6B", "Qwen3-Coder", "GLM-4.6",
                                  "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
                                  "moonshotai-Kimi-K2"])
@pytest.mark.parametrize("thinking", [None, True, False])
def test_it_renders_a_conversation_as_transformers_does(name: str, thinking: bool | None) -> None:
    source = load_template_file(CORPUS / f"{name}.jinja")
    kwargs = {} if thinking is None else {"enable_thinking": thinking}
    request = RenderRequest.make(CONVERSATION, tools=TOOLS, kwargs=kwargs)
    expected = hf_render(source, CONVERSATION, tools=TOOLS, add_generation_prompt=True, **kwargs)
    assert render_conversation(source, request).prompt == expected


@needs_corpus
@pytest.mark.parametrize("field", ["content", "reasoning_content"])
def test_it_continues_the_final_message_as_transformers_does(field: str) -> None:
    source = load_template_file(QWEN3)
    request = RenderRequest.make(CONTINUED, add_generation_prompt=False,
                                 continue_final_message=field)
    expected = hf_render(source, CONTINUED, continue_final_message=field)
    prompt = render_conversation(source, request).prompt
    assert prompt == expected
    assert prompt.endswith("Hello, I am" if field == "content" else "Greet.")


def test_it_keeps_the_key_order_the_template_writes() -> None:
    source = "{{ tools | tojson }}"
    request = RenderRequest.make([{"role": "user", "content": "x"}], tools=TOOLS)
    prompt = render_conversation(source, request).prompt
    assert prompt.index('"type"') < prompt.index('"function"')


def test_it_uses_the_templates_special_tokens_unless_overridden() -> None:
    source = TemplateSource(source="{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
                            bos_token="<s>", eos_token="</s>")
    messages = [{"role": "user", "content": "hi"}]
    own = render_conversation(source, RenderRequest.make(messages))
    other = render_conversation(source, RenderRequest.make(messages, bos_token="[B]",
                                                           eos_token=""))
    assert (own.prompt, other.prompt) == ("<s>hi</s>", "[B]hi")


def test_it_lists_the_kwargs_the_template_reads_and_the_unused_ones() -> None:
    source = "{% if enable_thinking %}T{% endif %}{{ thinking_budget }}"
    request = RenderRequest.make([], kwargs={"enable_thinking": True, "mood": "calm"})
    result = render_conversation(source, request)
    assert result.template_kwargs == ("enable_thinking", "thinking_budget")
    assert result.unused_kwargs == ("mood",)
    assert result.prompt == "T"


def test_it_falls_back_to_lenient_rendering_and_says_why() -> None:
    source = "{% set xs = [] %}{{ xs.append(1) or '' }}{{ xs | length }}"
    result = render_conversation(source, RenderRequest.make([]))
    assert result.render_mode is RenderMode.LENIENT and result.prompt == "1"
    assert "append" in result.render_note


def test_the_templates_own_refusal_is_raised() -> None:
    source = "{{ raise_exception('no system role') }}"
    with pytest.raises(TemplateRaisedError, match="no system role"):
        render_conversation(source, RenderRequest.make([{"role": "system", "content": "x"}]))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: RenderRequest.make("hi"), "messages: expected a JSON array"),
    (lambda: RenderRequest.make([{"content": "x"}]),
     'messages[0]: expected an object with a "role"'),
    (lambda: RenderRequest.make([], tools=[1]), "tools[0]: expected an object"),
    (lambda: RenderRequest.make([], kwargs={"messages": []}),
     "messages are arguments of their own"),
    (lambda: RenderRequest.make([], continue_final_message=True),
     "expected at most one of them"),
    (lambda: RenderRequest.make([{"role": "user", "content": {1, 2}}]),
     "expected JSON data only"),
])
def test_bad_requests_say_what_is_wrong(make: Any, message: str) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(message)):
        make()


def test_continuing_a_message_the_template_drops_says_so() -> None:
    source = "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}" \
             "{% endfor %}"
    request = RenderRequest.make(CONTINUED, add_generation_prompt=False,
                                 continue_final_message=True)
    with pytest.raises(InvalidInputError, match="found it missing"):
        render_conversation(source, request)


def test_a_request_survives_its_json() -> None:
    request = RenderRequest.make(CONVERSATION, tools=TOOLS, kwargs={"enable_thinking": False},
                                 bos_token="<s>")
    again = RenderRequest.from_json(request.to_json())
    assert again == request and again.to_json() == request.to_json()


def test_diff_shows_only_what_enable_thinking_changes() -> None:
    source = load_template_file(FORMATS / "think_forced_closed.jinja")
    base = RenderRequest.make([{"role": "user", "content": "Hi"}],
                              kwargs={"enable_thinking": True})
    on = render_conversation(source, base)
    off = render_conversation(source, base.with_changes(kwargs={"enable_thinking": False}))
    rd = diff_renders(on, off)
    assert rd.changed_inputs == ("kwargs.enable_thinking",)
    assert not rd.identical
    assert rd.diff.prefix + rd.diff.left + rd.diff.suffix == on.prompt
    assert rd.diff.prefix + rd.diff.right + rd.diff.suffix == off.prompt
    assert rd.diff.left != rd.diff.right


def test_arguments_as_dict_or_string_can_render_differently() -> None:
    source = "{% for m in messages %}{% for c in m.tool_calls or [] %}" \
             "{{ c.function.arguments | tojson }}{% endfor %}{% endfor %}"
    as_dict = RenderRequest.make([{"role": "assistant", "content": "", "tool_calls": [CALL]}])
    text_call = {**CALL, "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    as_text = as_dict.with_changes(messages=[{"role": "assistant", "content": "",
                                              "tool_calls": [text_call]}])
    rd = diff_renders(render_conversation(source, as_dict), render_conversation(source, as_text))
    assert rd.changed_inputs == ("messages",)
    assert (rd.left.prompt, rd.right.prompt) == ('{"city": "Paris"}', '"{\\"city\\": \\"Paris\\"}"')


def test_identical_renders_say_so() -> None:
    request = RenderRequest.make([{"role": "user", "content": "x"}])
    result = render_conversation("{{ messages | length }}", request)
    other = render_conversation("{{ messages | length }}",
                                request.with_changes(kwargs={"unused": 1}))
    assert diff_renders(result, other).identical
