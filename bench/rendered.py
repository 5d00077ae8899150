"""Bench outputs rendered through corpus templates, for formats the shared inputs lack.

`../shared/bench-inputs/` has outputs in three formats. For every other (SGLang detector,
corpus template) pair of `PAIRS`, the output is made the way those were: the template renders
[user, assistant{the first n calls of calls.json}] without a generation prompt and [user] with
one (the request's tools are `tools.json`); the output is what the first adds after the
second, minus the text the template closes the turn with (the verification's own cut,
`analyzer.checks.verify`). n is the fewest calls whose output reaches the size asked for, so an
output ends at a call boundary. The expected calls are the calls rendered.

A template that renders one call per assistant turn (it refuses more, or shows only the first;
a model stops after its call) gets one output per call instead, each parsed on its own. A
template whose history drops the reasoning block its generation prompt opens gets reasoning in
the message. Renders get the renderer's default limits, not the analysis' 32 KB.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from analyzer.analysis.pipeline import analyze
from analyzer.checks import verify
from analyzer.errors import AnalyzerError
from analyzer.generator import PromptContext, conversation_context, generate_parser
from analyzer.parsing.message import Message
from analyzer.parsing.options import ParseOptions
from analyzer.peg import Parser
from analyzer.render.loading import load_template_file
from analyzer.render.template import ChatTemplate

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared"
INPUTS = SHARED / "bench-inputs"
TEMPLATES = SHARED / "corpus" / "templates"
SIZES = {"25k": 25_000, "50k": 50_000, "100k": 100_000}
# Templates whose history drops an empty reasoning block after a prompt that opens one
# (MiniMax-M2, DeepSeek-R1) render a model's output only with reasoning in the message.
REASONING = "The user asked for these tasks; I will call the tools."


@dataclass(frozen=True)
class Pair:
    """A corpus template whose tool-call format an SGLang detector reads."""

    name: str
    template: str  # a file in ../shared/corpus/templates
    detector: tuple[str, str]  # (module, class) in sglang.srt.function_call
    # The detector reads its markers from the tokenizer's vocabulary: it gets the template's
    # special tokens as one (SGLang's server passes the model's tokenizer).
    vocabulary: bool = False


# Matched by rendering each template's calls and reading SGLang's detectors (bench/README.md).
PAIRS = (
    Pair("qwen2.5", "Qwen-Qwen2.5-7B-Instruct.jinja", ("qwen25_detector", "Qwen25Detector")),
    Pair("qwen3", "Qwen-Qwen3-0.6B.jinja", ("qwen25_detector", "Qwen25Detector")),
    Pair("hermes-3", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
         ("hermes_detector", "HermesDetector")),
    Pair("qwen3.5", "Qwen3.5-4B.jinja", ("qwen3_coder_detector", "Qwen3CoderDetector")),
    Pair("nemotron-3-nano", "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
         ("qwen3_coder_detector", "Qwen3CoderDetector")),
    Pair("step3.5", "StepFun3.5-Flash.jinja", ("qwen3_coder_detector", "Qwen3CoderDetector")),
    Pair("llama-3.1", "meta-llama-Llama-3.1-8B-Instruct.jinja",
         ("llama32_detector", "Llama32Detector")),
    Pair("llama-3.2", "meta-llama-Llama-3.2-3B-Instruct.jinja",
         ("llama32_detector", "Llama32Detector")),
    Pair("mistral-nemo", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
         ("mistral_detector", "MistralDetector")),
    Pair("mistral-small-3.2", "Mistral-Small-3.2-24B-Instruct-2506.jinja",
         ("mistral_detector", "MistralDetector")),
    Pair("devstral-small", "unsloth-mistral-Devstral-Small-2507.jinja",
         ("mistral_detector", "MistralDetector")),
    Pair("deepseek-r1", "llama-cpp-deepseek-r1.jinja",
         ("deepseekv3_detector", "DeepSeekV3Detector")),
    Pair("deepseek-v3.1", "deepseek-ai-DeepSeek-V3.1.jinja",
         ("deepseekv31_detector", "DeepSeekV31Detector")),
    Pair("deepseek-v3.2", "deepseek-ai-DeepSeek-V3.2.jinja",
         ("deepseekv32_detector", "DeepSeekV32Detector")),
    Pair("deepseek-v4", "deepseek-ai-DeepSeek-V4.jinja",
         ("deepseekv4_detector", "DeepSeekV4Detector")),
    Pair("kimi-k2", "moonshotai-Kimi-K2.jinja", ("kimik2_detector", "KimiK2Detector")),
    Pair("kimi-k2-thinking", "Kimi-K2-Thinking.jinja", ("kimik2_detector", "KimiK2Detector")),
    Pair("kimi-k3", "Kimi-K3.jinja", ("kimik3_detector", "KimiK3Detector")),
    Pair("glm-4.6", "GLM-4.6.jinja", ("glm4_moe_detector", "Glm4MoeDetector")),
    Pair("glm-4.7", "GLM-4.7-Flash.jinja", ("glm47_moe_detector", "Glm47MoeDetector")),
    Pair("gpt-oss", "openai-gpt-oss-120b.jinja", ("gpt_oss_detector", "GptOssDetector")),
    Pair("minimax-m2", "MiniMax-M2.jinja", ("minimax_m2", "MinimaxM2Detector")),
    Pair("minimax-m3", "MiniMax-M3.jinja", ("minimax_m3", "MinimaxM3Detector")),
    Pair("gigachat3", "GigaChat3-10B-A1.8B.jinja", ("gigachat3_detector", "GigaChat3Detector")),
    # GigaChat 3.1 renders GigaChat 3's `<|function_call|>{json}`, which GigaChat35Detector
    # (`<｜GCML｜tool_calls>`) does not read.
    Pair("gigachat3.1", "GigaChat3.1-10B-A1.8B.jinja",
         ("gigachat3_detector", "GigaChat3Detector")),
    Pair("gemma-4", "google-gemma-4-31B-it.jinja", ("gemma4_detector", "Gemma4Detector")),
    Pair("lfm2.5", "LFM2.5-8B-A1B.jinja", ("lfm2_detector", "Lfm2Detector")),
    Pair("hunyuan-3", "tencent-Hy3.jinja", ("hunyuan_detector", "HunyuanDetector"), True),
    Pair("minicpm5", "openbmb-MiniCPM5-1B.jinja", ("minicpm5_detector", "MiniCPM5Detector")),
    Pair("apertus", "Apertus-8B-Instruct.jinja", ("apertus2509_detector", "Apertus2509Detector")),
    Pair("cohere2", "Cohere2MoE.jinja", ("cohere_command4_detector", "CohereCommand4Detector")),
    Pair("poolside-laguna", "poolside-Laguna-XS-2.1.jinja",
         ("poolside_v1_detector", "PoolsideV1Detector")),
    Pair("muse-glimmer", "muse-glimmer.jinja", ("muse_glimmer_detector", "MuseGlimmerDetector")),
)
BY_NAME = {pair.name: pair for pair in PAIRS}


@dataclass(frozen=True)
class Output:
    """A rendered bench output, its calls, and the parser generated for its request."""

    pair: Pair
    # One model output holding every call; or, for a template that renders one call per
    # assistant turn (a model stops after it), one output per call, each parsed on its own.
    texts: tuple[str, ...]
    calls: tuple[tuple[str, Any], ...]  # (name, arguments object) as rendered
    parser: Parser
    tail: str  # what our parser reads before the output (the generation prompt's tail)
    special_tokens: tuple[str, ...]  # the analysis' preserved tokens


class NotRendered(Exception):  # noqa: N818 - a reason, read as a sentence
    """The template cannot render the calls as one model output (the message says why)."""


def shared_calls() -> list[dict[str, Any]]:
    """Return the shared inputs' fixed, seeded list of calls."""
    return list(json.loads((INPUTS / "calls.json").read_text(encoding="utf-8")))


def shared_tools() -> list[dict[str, Any]]:
    """Return the shared inputs' tool definitions."""
    return list(json.loads((INPUTS / "tools.json").read_text(encoding="utf-8")))


@cache
def _subject(template: str) -> verify.Subject:
    source = load_template_file(TEMPLATES / template)
    analysis = analyze(source)
    # The analysis' 32 KB render limit is for unknown templates; these outputs reach 100 KB.
    chat = ChatTemplate.from_source(source, mode=analysis.render_mode)
    return verify.Subject(analysis, chat, verify.required_kwargs(chat, analysis))


def render_output(pair: Pair, size: str | int) -> Output:
    """Render the pair's output of about `size` bytes (a key of SIZES, or a number); raise
    NotRendered when it cannot be."""
    target = SIZES[size] if isinstance(size, str) else size
    subject = _subject(pair.template)
    calls, tools = shared_calls(), shared_tools()
    errors = []
    for thinking in verify.thinking_settings(subject, verify.Case("calls", Message())):
        options = ParseOptions.make(tools=tools, enable_thinking=thinking,
                                    parallel_tool_calls=True,
                                    chat_template_kwargs=subject.kwargs)
        for reasoning in ("", REASONING):
            for shape in (_sized, _one_per_turn):
                try:
                    return shape(pair, subject, options, calls, target, reasoning)
                except NotRendered as why:
                    errors.append(f"enable_thinking={thinking}, {shape.__name__}: {why}")
    raise NotRendered("; ".join(dict.fromkeys(errors)))


def _sized(pair: Pair, subject: verify.Subject, options: ParseOptions,
           calls: Sequence[Mapping[str, Any]], target: int, reasoning: str) -> Output:
    """Render the fewest leading calls whose output reaches target bytes (doubling, then
    bisecting: a render is milliseconds, the output grows with each call)."""
    low, high = 1, 1
    text = _output(subject, options, reasoning, calls[:1])
    while len(text.encode()) < target:
        if high >= len(calls):
            raise NotRendered(f"all {len(calls)} calls make only {len(text.encode())} bytes")
        low, high = high, min(2 * high, len(calls))
        text = _output(subject, options, reasoning, calls[:high])
    while low < high:
        middle = (low + high) // 2
        if len(_output(subject, options, reasoning, calls[:middle]).encode()) >= target:
            high = middle
        else:
            low = middle + 1
    return _made(pair, subject, options, calls[:high],
                 (_output(subject, options, reasoning, calls[:high]),))


def _one_per_turn(pair: Pair, subject: verify.Subject, options: ParseOptions,
                  calls: Sequence[Mapping[str, Any]], target: int, reasoning: str) -> Output:
    """Render each call as its own output until they reach target bytes together."""
    texts: list[str] = []
    while sum(len(text.encode()) for text in texts) < target:
        if len(texts) == len(calls):
            raise NotRendered(f"all {len(calls)} calls make too few bytes")
        texts.append(_output(subject, options, reasoning, calls[len(texts) : len(texts) + 1]))
    return _made(pair, subject, options, calls[: len(texts)], tuple(texts))


def _made(pair: Pair, subject: verify.Subject, options: ParseOptions,
          calls: Sequence[Mapping[str, Any]], texts: tuple[str, ...]) -> Output:
    context = _context(subject, options)
    parser = generate_parser(subject.analysis, options, prompt=context)
    return Output(pair, texts, tuple((c["name"], c["arguments"]) for c in calls),
                  parser.parser, context.tail, subject.analysis.preserved_tokens)


def _context(subject: verify.Subject, options: ParseOptions) -> PromptContext:
    before = verify.user_turn(subject.analysis)
    return conversation_context(subject.chat, subject.analysis, before, options)


def _output(subject: verify.Subject, options: ParseOptions, reasoning: str,
            calls: Sequence[Mapping[str, Any]]) -> str:
    """Cut the model's part out of a render of one assistant message holding the calls."""
    before = verify.user_turn(subject.analysis)
    message = {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"call_{i:04d}", "type": "function",
         "function": {"name": c["name"], "arguments": c["arguments"]}}
        for i, c in enumerate(calls)]}
    if reasoning:
        message[subject.analysis.reasoning.field or "reasoning_content"] = reasoning
    try:
        prompt = verify.render(subject, before, options, True)
        full = verify.render(subject, [*before, message], options, False)
        closing = verify.turn_end(subject, before, options)
    except AnalyzerError as exc:
        raise NotRendered(f"the template refused the calls ({verify.first_line(exc)})") from exc
    start = verify.generated_start(prompt, full, subject.analysis)
    if isinstance(start, str):
        raise NotRendered(start)
    output = verify.cut_turn_end(full[start[0]:], closing, subject.analysis.preserved_tokens)
    names = [c["name"] for c in calls]
    if any(output.count(name) < names.count(name) for name in set(names)):
        raise NotRendered(f"the render does not show all {len(calls)} calls (one call per turn?)")
    return output
