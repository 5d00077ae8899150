"""What the model's output continues: the generation prompt, and the part of it a parser reads.

A parser reads generation prompt + output, not the output alone (as llama.cpp does): a prompt
that ends inside `<think>` means the output starts inside reasoning. Only the prompt's tail
from the reasoning start marker on is read; the role header before it is the template's, not
the model's. With reasoning_format none that tail stays visible in the content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from analyzer.analysis.diff import common_prefix_len, last_marker_end
from analyzer.errors import TemplateRenderError
from analyzer.handlers import choose_handler, handler_prefill
from analyzer.model import Analysis, ReasoningMode
from analyzer.parsing.options import ParseOptions
from analyzer.render.template import ChatTemplate

Messages = Sequence[Mapping[str, Any]]
UNDEFINED = re.compile(r"'(\w+)' is undefined")


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
    full = render(chat, history, options, True, analysis)
    bare = render(chat, history, options, False, analysis)
    prompt = full[common_prefix_len(full, bare) :]
    if not continuing:
        return PromptContext(prompt, prompt[tail_start(prompt, analysis) :])
    return PromptContext(prompt, prefill(prompt, analysis, messages[-1], options))


def prefill(prompt: str, analysis: Analysis, final: Mapping[str, Any],
            options: ParseOptions) -> str:
    """Write the message being continued as the model would have: reasoning, then content.

    As llama.cpp does, the prompt's own reasoning opening is kept and the message's reasoning
    follows it; continuing the content also closes the reasoning and adds the content.
    """
    start, end = analysis.reasoning.start.strip(), analysis.reasoning.end.strip()
    reasoning, content = message_reasoning(final), message_text(final)
    with_content = options.continue_final_message == "content"
    dedicated = handler_prefill(choose_handler(analysis))
    if dedicated is not None:
        return dedicated(reasoning, content, with_content)
    if start:
        text = opening(prompt, start) + reasoning
        return text + end + content if with_content else text
    if analysis.reasoning.mode == ReasoningMode.DELIMITER and end:
        return reasoning + "\n" + end + "\n" + content if with_content else reasoning
    return content if with_content else ""


def opening(prompt: str, start: str) -> str:
    """Return the reasoning start marker as the prompt writes it (with the space after it)."""
    at = prompt.find(start)
    if at < 0:
        return start
    after = at + len(start)
    return prompt[at : after + len(prompt[after:]) - len(prompt[after:].lstrip())]


def message_reasoning(message: Mapping[str, Any]) -> str:
    """Return a message's reasoning text, whichever field holds it."""
    for key in ("reasoning_content", "thinking", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def message_text(message: Mapping[str, Any]) -> str:
    """Return a message's content as text (text chunks joined)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(c.get("text", "")) for c in content if isinstance(c, Mapping))
    return ""


def render(chat: ChatTemplate, messages: list[dict[str, Any]], options: ParseOptions,
           add_generation_prompt: bool, analysis: Analysis) -> str:
    """Render messages with the options' tools and template variables.

    Like a server does, this gives an empty tool list to a template that loops over tools
    unconditionally, and "" to extra variables it reads but nobody sets (Firefunction's
    `functions`), as the analysis did.
    """
    kwargs = options.render_kwargs()
    tools: list[dict[str, Any]] | None = options.tools or None
    for _ in range(len(analysis.caps.template_kwargs) + 2):
        try:
            return chat.render(messages, tools=tools,
                               add_generation_prompt=add_generation_prompt, **kwargs)
        except TemplateRenderError as exc:
            missing = UNDEFINED.search(str(exc))
            if missing and missing.group(1) in analysis.caps.template_kwargs:
                kwargs.setdefault(missing.group(1), "")
            elif tools is None and "NoneType" in str(exc):
                tools = []
            else:
                raise
    return chat.render(messages, tools=tools, add_generation_prompt=add_generation_prompt,
                       **kwargs)


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
