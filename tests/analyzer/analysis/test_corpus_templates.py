"""The design notes' "Tested Templates": format, reasoning mode and key markers per template.

Every expected value below was read off the template source in ../shared/corpus/templates/
(what it writes around reasoning and around tool calls), not taken from the analyzer's
output. Where the design notes' table disagrees with the template, the template wins and a
comment says so.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from analyzer.analysis.pipeline import analyze
from analyzer.model import (
    Analysis,
    CallIdPosition,
    ContentMode,
    ReasoningMode,
    RenderMode,
    ToolFormat,
)

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "templates"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")

FORCING = (ReasoningMode.FORCED_OPEN, ReasoningMode.FORCED_CLOSED)


@cache
def analysis_of(name: str) -> Analysis:
    return analyze((CORPUS / f"{name}.jinja").read_text(encoding="utf-8"))


def source_of(name: str) -> str:
    return (CORPUS / f"{name}.jinja").read_text(encoding="utf-8")


def prompt(analysis: Analysis, enable_thinking: bool | None) -> str:
    return next(p.text for p in analysis.generation_prompts if p.enable_thinking is enable_thinking)


def test_ministral_reasoning_brackets_and_tool_calls() -> None:
    a = analysis_of("mistralai-Ministral-3-14B-Reasoning-2512")
    assert (a.reasoning.start, a.reasoning.end) == ("[THINK]", "[/THINK]")
    assert a.tools.format.mode == ToolFormat.TAG_WITH_JSON
    assert a.tools.format.per_call_start == "[TOOL_CALLS]"
    assert a.tools.arguments.start == "[ARGS]"


def test_nemotron_3_nano_tagged_tools_and_thinking() -> None:
    a = analysis_of("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert a.tools.format.mode == ToolFormat.TAG_WITH_TAGGED
    assert (a.tools.format.per_call_start, a.tools.format.per_call_end) == (
        "<tool_call>", "</tool_call>")
    assert (a.tools.function.name_prefix, a.tools.function.close) == ("<function=", "</function>")
    assert (a.tools.arguments.name_prefix, a.tools.arguments.value_suffix) == (
        "<parameter=", "</parameter>")
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")
    assert prompt(a, False).endswith("<think></think>")


def test_command_r7b_actions_thinking_and_response() -> None:
    a = analysis_of("CohereForAI-c4ai-command-r7b-12-2024-tool_use")
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE
    assert (a.tools.format.section_start, a.tools.format.section_end) == (
        "<|START_ACTION|>", "<|END_ACTION|>")
    assert (a.tools.format.name_field, a.tools.format.args_field) == ("tool_name", "parameters")
    assert a.tools.format.gen_id_field == "tool_call_id"
    assert (a.reasoning.start, a.reasoning.end) == ("<|START_THINKING|>", "<|END_THINKING|>")
    assert (a.content.mode, a.content.start, a.content.end) == (
        ContentMode.ALWAYS_WRAPPED, "<|START_RESPONSE|>", "<|END_RESPONSE|>")


def test_gemma_2_is_content_only() -> None:
    a = analysis_of("google-gemma-2-2b-it")
    assert not a.caps.supports_tool_calls
    assert a.tools.format.mode == ToolFormat.NONE
    assert a.reasoning.mode == ReasoningMode.NONE and a.content.mode == ContentMode.PLAIN


def test_qwq_opens_thinking_in_the_prompt() -> None:
    a = analysis_of("Qwen-QwQ-32B")
    assert a.reasoning.mode in FORCING
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")
    assert prompt(a, True).rstrip().endswith("<think>")


def test_hermes_2_pro_json_in_tool_call_tags() -> None:
    a = analysis_of("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use")
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE
    assert (a.tools.format.per_call_start, a.tools.format.per_call_end) == (
        "<tool_call>", "</tool_call>")
    assert (a.tools.format.name_field, a.tools.format.args_field) == ("name", "arguments")


def test_granite_3_3_needs_its_workaround() -> None:
    a = analysis_of("ibm-granite-granite-3.3-2B-Instruct")
    assert "granite-3.3-thinking-prompt" in a.workarounds
    assert (a.reasoning.mode, a.reasoning.start, a.reasoning.end) == (
        ReasoningMode.TAG_BASED, "<think>", "</think>")
    assert (a.content.mode, a.content.start, a.content.end) == (
        ContentMode.WRAPPED_WITH_REASONING, "<response>", "</response>")


def test_seed_oss_custom_tags() -> None:
    a = analysis_of("ByteDance-Seed-OSS")
    assert a.tools.format.mode == ToolFormat.TAG_WITH_TAGGED
    assert a.tools.format.per_call_start == "<seed:tool_call>"
    assert (a.tools.function.name_prefix, a.tools.function.name_suffix) == ("<function=", ">")
    assert a.tools.arguments.name_prefix == "<parameter="
    assert (a.reasoning.start, a.reasoning.end) == ("<seed:think>", "</seed:think>")


def test_qwen3_coder_xml_tools_with_python_literals() -> None:
    a = analysis_of("Qwen3-Coder")
    assert a.tools.format.mode == ToolFormat.TAG_WITH_TAGGED
    assert a.tools.function.name_prefix == "<function=" and a.tools.function.close == "</function>"
    assert (a.tools.arguments.name_prefix, a.tools.arguments.name_suffix) == ("<parameter=", ">")
    # The template writes non-string values with `| string`: True, not true.
    assert "else args_value | string" in source_of("Qwen3-Coder")
    assert a.tools.arguments.literal_style == "python"


def test_deepseek_v3_1_forced_thinking_and_unicode_markers() -> None:
    a = analysis_of("deepseek-ai-DeepSeek-V3.1")
    # The notes file it as JSON_NATIVE; the template writes the name outside the JSON.
    assert a.tools.format.mode == ToolFormat.TAG_WITH_JSON
    assert a.tools.format.section_start == "<｜tool▁calls▁begin｜>"
    assert a.tools.format.per_call_start == "<｜tool▁call▁begin｜>"
    assert a.tools.arguments.start == "<｜tool▁sep｜>"
    assert a.reasoning.mode in FORCING and prompt(a, True).endswith("<think>")


@pytest.mark.parametrize("name", ["GLM-4.6", "GLM-4.7-Flash"])
def test_glm_arg_key_value_tags(name: str) -> None:
    a = analysis_of(name)
    args = a.tools.arguments
    assert a.tools.format.mode == ToolFormat.TAG_WITH_TAGGED
    assert a.tools.format.per_call_start == "<tool_call>"
    assert (args.name_prefix, args.name_suffix) == ("<arg_key>", "</arg_key>")
    assert (args.value_prefix, args.value_suffix) == ("<arg_value>", "</arg_value>")
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")


@pytest.mark.parametrize("name", ["Kimi-K2-Thinking", "Kimi-K2-Instruct"])
def test_kimi_k2_variants_are_analyzed_leniently_with_the_same_tool_format(name: str) -> None:
    # Both keep call ids in `namespace(ids=[])` and `.append` to it, which transformers'
    # sandbox refuses and llama.cpp's Jinja allows.
    a = analysis_of(name)
    assert a.render_mode == RenderMode.LENIENT
    assert "access to attribute 'append' of 'list' object is unsafe" in a.render_note
    assert "tool_response_queue.ids.append(formatted_id)" in a.render_note
    assert_kimi_k2(a)


def test_kimi_k2_thinking_reasoning_tags() -> None:
    # `<think>{{rc}}</think>` is written for the assistant turns after the last plain answer.
    a = analysis_of("Kimi-K2-Thinking")
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")
    assert "kimi-k2-think-tags" not in a.workarounds


def test_kimi_k2_prefixed_indexed() -> None:
    a = analysis_of("moonshotai-Kimi-K2")
    assert a.render_mode == RenderMode.HF and a.render_note == ""
    assert_kimi_k2(a)


@pytest.mark.parametrize("name", ["moonshotai-Kimi-K2", "Kimi-K2-Instruct"])
def test_kimi_k2_reads_think_tags_its_template_never_fills(name: str) -> None:
    # The first K2 template drops reasoning; the Instruct one always writes `<think></think>`
    # empty. The model writes `<think>...</think>` as Kimi-K2-Thinking's template shows.
    assert "<think>" not in source_of("moonshotai-Kimi-K2")
    a = analysis_of(name)
    assert "kimi-k2-think-tags" in a.workarounds
    assert a.reasoning.mode == ReasoningMode.TAG_BASED
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")


def assert_kimi_k2(a: Analysis) -> None:
    tools = a.tools
    assert tools.format.mode == ToolFormat.TAG_WITH_JSON
    assert tools.format.section_start == "<|tool_calls_section_begin|>"
    assert tools.format.section_end == "<|tool_calls_section_end|>"
    assert tools.format.per_call_start == "<|tool_call_begin|>"
    assert tools.function.name_prefix == "functions."
    assert tools.call_index.present and tools.call_index.prefix == ":"
    assert tools.arguments.start == "<|tool_call_argument_begin|>"
    assert tools.format.per_call_end == "<|tool_call_end|>"


def test_apertus_function_name_as_key() -> None:
    a = analysis_of("Apertus-8B-Instruct")
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE and a.tools.format.fun_name_is_key
    assert (a.tools.format.section_start, a.tools.format.section_end) == (
        "<|tools_prefix|>", "<|tools_suffix|>")


def test_minimax_m2_invoke_and_parameter_tags() -> None:
    a = analysis_of("MiniMax-M2")
    # The notes say TAG_WITH_JSON; the template writes one <parameter name="k"> tag per argument.
    assert a.tools.format.mode == ToolFormat.TAG_WITH_TAGGED
    assert a.tools.format.section_start == "<minimax:tool_call>"
    assert a.tools.function.name_prefix == '<invoke name="'
    assert a.tools.arguments.name_prefix == '<parameter name="'
    assert a.tools.arguments.value_suffix == "</parameter>"
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")


def test_nemotron_nano_v2_toolcall_wrapper() -> None:
    a = analysis_of("NVIDIA-Nemotron-Nano-v2")
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE and a.tools.format.tools_array_wrapped
    assert (a.tools.format.section_start, a.tools.format.section_end) == (
        "<TOOLCALL>", "</TOOLCALL>")
    assert a.reasoning.mode in FORCING and a.reasoning.end == "</think>"


def test_command_r_plus_markdown_block() -> None:
    a = analysis_of("CohereForAI-c4ai-command-r-plus-tool_use")
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE
    assert a.tools.format.section_start == "Action:\n```json"
    assert a.tools.format.section_end == "```"
    assert a.tools.format.variant == "markdown-block"


def test_mistral_nemo_array_with_ids() -> None:
    a = analysis_of("mistralai-Mistral-Nemo-Instruct-2407")
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE
    assert a.tools.format.section_start == "[TOOL_CALLS]" and a.tools.format.tools_array_wrapped
    assert a.tools.format.id_field == "id"


def test_functionary_v3_1_function_tags() -> None:
    a = analysis_of("meetkai-functionary-medium-v3.1")
    assert a.tools.format.mode == ToolFormat.TAG_WITH_JSON
    assert (a.tools.function.name_prefix, a.tools.function.name_suffix) == ("<function=", ">")
    assert a.tools.function.close == "</function>"
    assert a.tools.format.section_end == ""  # <|eom_id|> ends the turn, not the calls


def test_functionary_v3_2_takes_arguments_as_strings() -> None:
    a = analysis_of("meetkai-functionary-medium-v3.2")
    assert a.caps.supports_string_arguments


def test_firefunction_v2_functools_array() -> None:
    a = analysis_of("fireworks-ai-llama-3-firefunction-v2")
    # `functools[{"name": ..., "arguments": ...}]`: the name is inside JSON.
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE
    assert a.tools.format.section_start == "functools" and a.tools.format.tools_array_wrapped


@pytest.mark.parametrize("name", ["deepseek-ai-DeepSeek-R1-Distill-Llama-8B",
                                  "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
                                  "llama-cpp-deepseek-r1"])
def test_deepseek_r1_prompts_open_thinking(name: str) -> None:
    a = analysis_of(name)
    assert a.reasoning.mode in FORCING
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")
    assert prompt(a, True).rstrip().endswith("<think>")


def test_llama_cpp_deepseek_r1_tool_list_is_rendered_leniently() -> None:
    # `tools | map(attribute='function') | tojson(indent=2)`: transformers cannot serialize
    # the generator map() returns; llama.cpp writes it as a list.
    a = analysis_of("llama-cpp-deepseek-r1")
    assert a.render_mode == RenderMode.LENIENT
    assert "Object of type generator is not JSON serializable" in a.render_note
    assert a.tools.format.section_start == "<｜tool▁calls▁begin｜>"
    assert a.tools.format.per_call_start == "<｜tool▁call▁begin｜>function<｜tool▁sep｜>"


def test_deepseek_r1_distill_qwen_unicode_tool_markers() -> None:
    a = analysis_of("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B")
    assert a.tools.format.section_start == "<｜tool▁calls▁begin｜>"
    assert a.tools.format.section_end == "<｜tool▁calls▁end｜>"
    assert a.tools.format.per_call_start == "<｜tool▁call▁begin｜>function<｜tool▁sep｜>"
    assert a.tools.function.name_suffix == "```json" and a.tools.function.close == "```"


@pytest.mark.parametrize("name", ["meta-llama-Llama-3.1-8B-Instruct",
                                  "meta-llama-Llama-3.2-3B-Instruct",
                                  "meta-llama-Llama-3.3-70B-Instruct"])
def test_llama_3_json_with_parameters(name: str) -> None:
    a = analysis_of(name)
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE
    assert (a.tools.format.name_field, a.tools.format.args_field) == ("name", "parameters")


@pytest.mark.parametrize(("name", "handler"), [
    ("openai-gpt-oss-120b", "gpt-oss-channels"),
    ("meetkai-functionary-medium-v3.2", "functionary-v3.2-recipients"),
    ("muse-glimmer", "muse-atem-recipients"),
    ("Qwen3-Coder", "auto"),
])
def test_the_analysis_names_the_handler_that_parses_the_output(name: str, handler: str) -> None:
    # gpt-oss writes answers on `<|channel|>final`, Functionary v3.2 opens the prompt with a
    # `>>>` recipient, Muse routes reasoning `to=self`: formats only a dedicated handler reads.
    a = analysis_of(name)
    assert a.handler == handler and a.caps.supports_tool_calls


def test_apriel_1_5_tool_calls_array() -> None:
    a = analysis_of("unsloth-Apriel-1.5")
    assert a.tools.format.mode == ToolFormat.JSON_NATIVE and a.tools.format.tools_array_wrapped
    assert (a.tools.format.section_start, a.tools.format.section_end) == (
        "<tool_calls>", "</tool_calls>")


def test_apriel_1_6_reasoning_ends_at_a_delimiter() -> None:
    a = analysis_of("Apriel-1.6-15b-Thinker-fixed")
    assert (a.reasoning.mode, a.reasoning.end) == (ReasoningMode.DELIMITER,
                                                   "[BEGIN FINAL RESPONSE]")


def test_mistral_small_3_2_call_ids() -> None:
    a = analysis_of("Mistral-Small-3.2-24B-Instruct-2506")
    assert a.tools.format.per_call_start == "[TOOL_CALLS]"
    assert a.tools.call_id.pos == CallIdPosition.BETWEEN_FUNC_AND_ARGS
    assert a.tools.call_id.prefix == "[CALL_ID]" and a.tools.arguments.start == "[ARGS]"


def test_devstral_without_call_ids() -> None:
    a = analysis_of("unsloth-mistral-Devstral-Small-2507")
    assert a.tools.format.per_call_start == "[TOOL_CALLS]"
    assert a.tools.call_id.pos == CallIdPosition.NONE and a.tools.arguments.start == "[ARGS]"


def test_stepfun_3_5_flash_function_and_parameter_tags() -> None:
    a = analysis_of("StepFun3.5-Flash")
    assert a.tools.format.mode == ToolFormat.TAG_WITH_TAGGED
    assert a.tools.function.name_prefix == "<function="
    assert a.tools.arguments.name_prefix == "<parameter="
    assert (a.reasoning.start, a.reasoning.end) == ("<think>", "</think>")


def test_key_markers_appear_in_their_template_sources() -> None:
    # Markers are read off renders; each must also be text the template itself writes
    # (except those a workaround declares because no render shows them).
    for name in ("Qwen3-Coder", "GLM-4.6", "ByteDance-Seed-OSS", "moonshotai-Kimi-K2"):
        a, source = analysis_of(name), source_of(name)
        declared = {m.text for m in a.markers if m.comparison.startswith("workaround:")}
        for token in set(a.preserved_tokens) - declared:
            assert token.strip("\"=>") in source or token in source, (name, token)


def test_command_r_plus_turn_markers() -> None:
    # The template writes <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>, the content, then
    # <|END_OF_TURN_TOKEN|>.
    content = analysis_of("CohereForAI-c4ai-command-r-plus-tool_use").content
    assert (content.turn_start, content.turn_end) == ("<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>")


def test_kimi_k3_names_each_value_type_including_null() -> None:
    # open_tag('argument', [('key', key), ('type', xtml_type(value))]) writes
    # `<|open|>argument key="K" type="T"<|sep|>`; xtml_type gives "null" for none.
    typed = analysis_of("Kimi-K3").tools.arguments.typed_prefixes
    prefixes = {e.json_type: e.prefix for e in typed}
    assert prefixes["null"] == 'null"<|sep|>'
    assert prefixes["number"] == 'number"<|sep|>'


def test_kimi_k3_tags_keep_their_closing_sep() -> None:
    # open_tag/close_tag write `<|open|>NAME attrs<|sep|>` and `<|close|>NAME<|sep|>`.
    layout = analysis_of("Kimi-K3").tools.format
    assert (layout.section_start, layout.section_end) == ("<|open|>tools<|sep|>",
                                                          "<|close|>tools<|sep|>")
    assert layout.per_call_end == "<|close|>call<|sep|>"


def test_solar_open_reasoning_turn_then_content_turn() -> None:
    # `<|begin|>assistant<|think|>` + reasoning + `<|end|>`, then
    # `<|begin|>assistant<|content|>` + content + `<|end|>`; calls: `<|tool_calls|>...<|calls|>`.
    a = analysis_of("upstage-Solar-Open-100B")
    assert (a.reasoning.start, a.reasoning.end) == ("<|think|>", "<|end|>")
    assert a.reasoning.after_end == "<|begin|>assistant"
    assert (a.content.mode, a.content.start, a.content.end) == (
        ContentMode.ALWAYS_WRAPPED, "<|content|>", "<|end|>")
    assert (a.tools.format.section_start, a.tools.format.section_end) == (
        "<|tool_calls|>", "<|calls|>")


def test_value_padding_qwen3_coder_vs_seed_oss() -> None:
    # Qwen3-Coder writes '<parameter=' + name + '>\n', the value, then '\n</parameter>\n';
    # Seed-OSS writes the value right after '>' and `arg_value+"</parameter>\n"`.
    assert analysis_of("Qwen3-Coder").tools.arguments.value_padding == ("\n", "\n")
    assert analysis_of("ByteDance-Seed-OSS").tools.arguments.value_padding == ("", "")
