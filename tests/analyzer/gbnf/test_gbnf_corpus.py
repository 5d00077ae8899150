"""The generated grammars accept what each corpus template renders for a tool call.

For every template whose analysis finds a tool-call format: render the conversation up to
the generation prompt, and the same conversation with an assistant tool call; the model's
part is what follows the prompt, minus the end-of-turn text the template adds. The grammar
built from the analysis must accept it (tool_choice "required": the whole output; "auto":
from the trigger on), pass llama.cpp's strictness rules, and reject a corrupted call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from analyzer import ChatTemplate, analyze
from analyzer.analysis.diff import common_prefix_fixed
from analyzer.checks.verify import cut_turn_end
from analyzer.errors import AnalyzerError
from analyzer.gbnf import GrammarResult, TriggerKind, build_tool_grammar, check_gbnf_strict
from analyzer.gbnf.check import match_text
from analyzer.model import Analysis, ReasoningMode, ToolFormat

TEMPLATES = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "templates"
NAMES = sorted(p.stem for p in TEMPLATES.glob("*.jinja")) if TEMPLATES.is_dir() else []

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "City"},
        "days": {"type": "integer", "description": "Days ahead"},
        "metric": {"type": "boolean", "description": "Metric units"}},
        "required": ["location", "days"]}}}]
ARGUMENTS = {"location": "Paris", "days": 3, "metric": True}
USER = [{"role": "user", "content": "What is the weather?"}]
PLAIN_ANSWER = "XYZ-PLAIN-ANSWER"

@dataclass(frozen=True)
class Rendered:
    """What the model would have generated for one call, and the prompt before it."""

    prompt: str
    output: str


@cache
def _analysis(name: str) -> Analysis:
    return analyze((TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8"))


def _assistant(analysis: Analysis, calls: int, content: Any, as_text: bool) -> dict[str, Any]:
    arguments = json.dumps(ARGUMENTS) if as_text else ARGUMENTS
    message: dict[str, Any] = {"role": "assistant", "content": content, "tool_calls": [
        {"id": f"call0000{i + 1}", "type": "function",
         "function": {"name": "get_weather", "arguments": arguments}} for i in range(calls)]}
    if analysis.reasoning.mode != ReasoningMode.NONE:
        # Forced-open templates expect the model to close its reasoning before calling.
        message[analysis.reasoning.field or "reasoning_content"] = "Let me check."
    return message


def _render(template: ChatTemplate, analysis: Analysis, messages: list[dict[str, Any]],
            **options: Any) -> str:
    """Render; templates that read serving-side variables (Firefunction) get them empty."""
    try:
        return template.render(messages, tools=TOOLS, **options)
    except AnalyzerError:
        if not analysis.caps.template_kwargs:
            raise
    extra = dict.fromkeys(analysis.caps.template_kwargs, "")
    return template.render(messages, tools=TOOLS, **options, **extra)


def _render_call(template: ChatTemplate, analysis: Analysis, calls: int) -> tuple[str, str]:
    problem: Exception | None = None
    for content, as_text in (("", False), ("", True), (None, False)):
        try:
            message = _assistant(analysis, calls, content, as_text)
            plain = {"role": "assistant", "content": PLAIN_ANSWER}
            return (_render(template, analysis, USER + [message]),
                    _render(template, analysis, USER + [plain]))
        except AnalyzerError as exc:
            problem = exc
    pytest.skip(f"the template does not render a {calls}-call message: {problem}")


def _strip_end_of_turn(output: str, plain: str, analysis: Analysis) -> str:
    """Drop what the template appends after any assistant turn, and end-of-turn tokens."""
    tail = plain[plain.index(PLAIN_ANSWER) + len(PLAIN_ANSWER):] if PLAIN_ANSWER in plain else ""
    # A content wrapper's end closes the plain answer only: the calls have closers of their own
    # (Kimi-K3's `<|close|>response<|sep|>` vs `<|close|>tools<|sep|>` share the `<|sep|>`).
    wrapper_end = analysis.content.end.strip()
    if wrapper_end and tail.lstrip().startswith(wrapper_end):
        tail = tail.lstrip()[len(wrapper_end):]
    return cut_turn_end(output, tail, analysis.preserved_tokens)


def _rendered(name: str, calls: int) -> Rendered:
    analysis = _analysis(name)
    # Rendered as the analysis was: leniently when transformers refuses the template.
    template = ChatTemplate((TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8"),
                            bos_token="<s>", eos_token="</s>", mode=analysis.render_mode)
    prompt = _render(template, analysis, USER, add_generation_prompt=True)
    full, plain = _render_call(template, analysis, calls)
    cut = len(prompt) if full.startswith(prompt) else common_prefix_fixed(prompt, full)
    output = _strip_end_of_turn(full[cut:], plain, analysis)
    if "get_weather" not in output:
        pytest.skip("the template renders no tool call text for an assistant message")
    return Rendered(full[:cut], output)


def _from_trigger(result: GrammarResult, output: str) -> str:
    starts = []
    for trigger in result.triggers:
        if trigger.kind == TriggerKind.WORD:
            starts.append(output.find(trigger.value))
        else:
            found = re.search(trigger.value, output)
            starts.append(found.start(1) if found else -1)
    assert any(s >= 0 for s in starts), f"no trigger {result.triggers} in {output!r}"
    return output[min(s for s in starts if s >= 0):]


def _check(name: str, calls: int, choice: str) -> None:
    if not NAMES:
        pytest.skip(f"corpus templates not found at {TEMPLATES}")
    analysis = _analysis(name)
    if analysis.tools.format.mode == ToolFormat.NONE:
        pytest.skip("the analysis finds no tool-call format")
    rendered = _rendered(name, calls)
    result = build_tool_grammar(analysis, TOOLS, parallel_tool_calls=calls > 1,
                                tool_choice=choice, generation_prompt=rendered.prompt)
    assert check_gbnf_strict(result.grammar) == []
    text = _from_trigger(result, rendered.output) if result.lazy else rendered.output
    found = match_text(result.grammar, text)
    assert found.accepted, f"{found.describe()}\noutput: {text!r}"
    wrong_name = text.replace("get_weather", "get_wether")
    assert not match_text(result.grammar, wrong_name).accepted
    assert not match_text(result.grammar, text[:-1]).accepted


@pytest.mark.parametrize("name", NAMES)
def test_grammar_accepts_the_rendered_call_as_the_whole_output(name: str) -> None:
    _check(name, 1, "required")


@pytest.mark.parametrize("name", NAMES)
def test_lazy_grammar_accepts_the_rendered_call_from_its_trigger(name: str) -> None:
    _check(name, 1, "auto")


@pytest.mark.parametrize("name", NAMES)
def test_lazy_grammar_accepts_two_rendered_calls_when_parallel(name: str) -> None:
    _check(name, 2, "auto")


def test_corpus_is_present_or_skipped_with_a_reason() -> None:
    if not NAMES:
        pytest.skip(f"corpus templates not found at {TEMPLATES}")
    assert len(NAMES) >= 60
