"""What the model's output continues: the generation prompt, and the part of it a parser reads.

A parser reads generation prompt + output, not the output alone (as llama.cpp does): a prompt
that ends inside `<think>` means the output starts inside reasoning. Only the prompt's tail
from the reasoning start marker on is read; the role header before it is the template's, not
the model's. With reasoning_format none that tail stays visible in the content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzer.diff import common_prefix_len, last_marker_end
from analyzer.model import Analysis, ReasoningMode
from analyzer.options import ParseOptions
from analyzer.render import ChatTemplate

Messages = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class PromptContext:
    """The generation prompt used, and the text a parser reads before the model's output."""

    generation_prompt: str
    tail: str


def tail_start(prompt: str, analysis: Analysis) -> int:
    """Return where, in a generation prompt, the text the parser reads begins."""
    start = analysis.reasoning.start.strip()
    if start and start in prompt:
        return prompt.find(start)
    if analysis.reasoning.mode == ReasoningMode.DELIMITER and analysis.reasoning.end:
        # No start marker: what the prompt writes after its role header opens the reasoning.
        return last_marker_end(prompt)
    return len(prompt)


def analysis_context(analysis: Analysis, options: ParseOptions) -> PromptContext:
    """Use the analysis' generation prompt for the options' enable_thinking setting."""
    prompts = {p.enable_thinking: p for p in analysis.generation_prompts}
    chosen = prompts.get(options.enable_thinking) or prompts.get(None)
    text = chosen.text if chosen is not None else ""
    return PromptContext(text, text[tail_start(text, analysis) :])


def conversation_context(
    chat: ChatTemplate, analysis: Analysis, messages: Messages, options: ParseOptions
) -> PromptContext:
    """Render the conversation's generation prompt (and prefill, when continuing a message)."""
    continuing = options.continue_final_message != "none" and bool(messages)
    history = template_messages(messages[:-1] if continuing else messages, analysis)
    full = render(chat, history, options, True)
    bare = render(chat, history, options, False)
    prompt = full[common_prefix_len(full, bare) :]
    start = len(full) - len(prompt) + tail_start(prompt, analysis)
    if not continuing:
        return PromptContext(prompt, full[start:])
    final = template_messages([dict(messages[-1])], analysis)
    prefilled = prefill_render(chat, history + final, options)
    start = min(start, common_prefix_len(prefilled, full))
    return PromptContext(prompt, prefilled[start:])


def render(chat: ChatTemplate, messages: list[dict[str, Any]], options: ParseOptions,
           add_generation_prompt: bool) -> str:
    """Render messages with the options' tools and template variables."""
    return chat.render(messages, tools=options.tools or None,
                       add_generation_prompt=add_generation_prompt, **options.render_kwargs())


def prefill_render(
    chat: ChatTemplate, messages: list[dict[str, Any]], options: ParseOptions
) -> str:
    """Render the conversation and cut it right after the final message's text."""
    text = render(chat, messages, options, False)
    final = messages[-1]
    written = final.get("content") if options.continue_final_message == "content" else None
    written = written or final.get("reasoning_content") or ""
    if not isinstance(written, str) or not written:
        return text
    at = text.rfind(written)
    if at >= 0:
        return text[: at + len(written)]
    core = written.rstrip()
    at = text.rfind(core) if core else -1
    # The template trimmed the text: keep the trailing whitespace the model continues after.
    return text[: at + len(core)] + written[len(core) :] if at >= 0 else text


def template_messages(messages: Messages, analysis: Analysis) -> list[dict[str, Any]]:
    """Copy messages, decoding tool-call arguments when the template wants objects."""
    copied = [dict(message) for message in messages]
    if not analysis.caps.requires_object_arguments:
        return copied
    for message in copied:
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            message["tool_calls"] = [with_object_arguments(call) for call in calls]
    return copied


def with_object_arguments(call: Mapping[str, Any]) -> dict[str, Any]:
    """Return a tool call whose JSON-string arguments are decoded to an object."""
    function = dict(call.get("function") or {})
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            function["arguments"] = json.loads(arguments)
        except ValueError:
            pass
    return {**call, "function": function}
