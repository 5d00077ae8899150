"""The live textbox's sample: the example tool call rendered through the template itself."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

import analyzer
from lab.analyses import engine, parsing, samples

WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}


@cache
def _analysed(source: str) -> str:
    return analyzer.analysis_to_json(analyzer.analyze(engine.load_pasted(source)))


def sample_of(source: str) -> samples.Sample:
    return samples.build_sample(source, "", "", _analysed(source))


def read_back(source: str, sample: samples.Sample) -> parsing.LiveState:
    live = parsing.open_stream(_analysed(source), sample.options())
    assert live is not None
    live.feed(sample.text)
    return live.finish()


def test_qwen3s_sample_is_its_own_assistant_turn_calling_the_example_tool(
    corpus_templates: Path,
) -> None:
    sample = sample_of((corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text())
    # Qwen3 renders a past assistant turn with an empty think block, then the call as JSON in
    # <tool_call>...</tool_call>; the sample starts right after the generation prompt
    # (`<|im_start|>assistant\n`) and stops before the turn's `<|im_end|>`.
    assert sample.friendly
    assert sample.text.startswith("<think>\n\n</think>\n\n<tool_call>\n")
    assert sample.text.endswith("\n</tool_call>")
    start = sample.text.index("<tool_call>\n") + len("<tool_call>\n")
    assert json.loads(sample.text[start : -len("\n</tool_call>")]) == WEATHER
    assert [tool["function"]["name"] for tool in sample.tools] == ["get_weather"]
    assert "fa_lookup_one" not in sample.text and "pa_city" not in sample.text


def test_the_default_options_are_the_example_tools_shown_in_the_tools_box() -> None:
    sample = samples.Sample("text", samples.EXAMPLE_TOOLS, friendly=True)
    options = sample.options()
    assert options.tools == samples.EXAMPLE_TOOLS
    assert (options.tool_choice, options.json_schema, options.enable_thinking) == (
        "auto",
        None,
        None,
    )


def test_a_template_without_tools_or_reasoning_gets_a_plain_sample(corpus_templates: Path) -> None:
    sample = sample_of((corpus_templates / "google-gemma-2-2b-it.jinja").read_text())
    assert (sample.text, sample.tools) == (samples.PLAIN_SAMPLE, [])


THINKER = """{%- for m in messages -%}
{%- if m.role == 'assistant' -%}
<|assistant|>{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}\
{{ m.content }}<|end|>
{%- else -%}<|{{ m.role }}|>{{ m.content }}<|end|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%}
"""


def test_a_template_with_reasoning_and_no_tools_gets_friendly_reasoning() -> None:
    sample = sample_of(THINKER)
    assert sample.friendly and sample.tools == []
    # R1 differs only by the think block (the answer is common to both variants).
    assert sample.text == "<think>The user wants the weather in Paris; I will look it up.</think>"
    state = read_back(THINKER, sample)
    assert state.reasoning == "The user wants the weather in Paris; I will look it up."


# A template that renders calls but refuses the example tool's name: the friendly render fails.
REFUSES_WEATHER = """{%- for m in messages -%}
{%- if m.role == 'assistant' and m.tool_calls -%}<|assistant|>
{%- for c in m.tool_calls -%}
{%- if c.function.name == 'get_weather' -%}{{ raise_exception('no weather here') }}{%- endif -%}
<call>{{ c.function | tojson }}</call>
{%- endfor -%}<|end|>
{%- else -%}<|{{ m.role }}|>{{ m.content }}<|end|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%}
"""


def test_when_the_example_cannot_be_rendered_the_probe_call_is_used_with_its_tools() -> None:
    sample = sample_of(REFUSES_WEATHER)
    assert not sample.friendly
    assert sample.text == (
        '<call>{"name": "fa_lookup_one", "arguments": {"pa_city": "XXXX", "qb_units": "YYYY"}}'
        "</call>"
    )
    assert "fa_lookup_one" in [tool["function"]["name"] for tool in sample.tools]
    [call] = read_back(REFUSES_WEATHER, sample).tool_calls
    assert call.name == "fa_lookup_one"


def _tool_calling(corpus: Path) -> list[Path]:
    return [
        path
        for path in sorted(corpus.glob("*.jinja"))
        if any(
            c.get("id") == "T1" and (c.get("diff") or {}).get("right")
            for c in json.loads(_analysed(path.read_text()))["comparisons"]
        )
    ]


def test_every_tool_calling_corpus_template_samples_the_example_call_its_parser_reads(
    corpus_templates: Path,
) -> None:
    templates = _tool_calling(corpus_templates)
    if len(templates) < 10:
        pytest.skip(f"only {len(templates)} tool-calling templates in {corpus_templates}")
    wrong = {}
    for path in templates:
        source = path.read_text()
        sample = sample_of(source)
        state = read_back(source, sample)
        calls = [(c.name, json.loads(c.arguments)) for c in state.tool_calls]
        if not sample.friendly or calls != [(WEATHER["name"], WEATHER["arguments"])]:
            wrong[path.name] = (sample.text[:80], calls)
    assert wrong == {}
