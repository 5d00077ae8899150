"""What a parser reads before the output: the generation prompt's tail, and prefills."""

from __future__ import annotations

from pathlib import Path

from analyzer.analysis.pipeline import analyze, compiled
from analyzer.generator import analysis_context, conversation_context, generate_parser
from analyzer.parsing.options import ParseOptions
from analyzer.render.loading import load_template_file

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"
USER = [{"role": "user", "content": "Hi"}]


def context(name: str, messages: list[dict[str, str]], **options: object):  # type: ignore[no-untyped-def]
    source = load_template_file(FORMATS / f"{name}.jinja")
    chat = compiled(source.source, source.bos_token, source.eos_token, analyze(source).render_mode)
    return conversation_context(chat, analyze(source), messages, ParseOptions.make(**options))


def test_the_tail_starts_at_the_reasoning_opening_of_the_prompt() -> None:
    found = context("think_forced_open", USER, enable_thinking=True)
    assert (found.generation_prompt, found.tail) == ("<|assistant|><think>\n", "<think>\n")


def test_a_prompt_without_reasoning_leaves_nothing_to_read() -> None:
    found = context("think_forced_open", USER, enable_thinking=False)
    assert (found.generation_prompt, found.tail) == ("<|assistant|>", "")


def test_the_analysis_prompt_is_used_without_a_conversation() -> None:
    analysis = analyze(load_template_file(FORMATS / "think_forced_closed.jinja"))
    found = analysis_context(analysis, ParseOptions.make(enable_thinking=False))
    assert found.tail == "<think>\n</think>\n\n"


def test_continuing_the_content_closes_the_prefilled_reasoning() -> None:
    messages = [*USER, {"role": "assistant", "content": "Hello, ", "reasoning_content": "plan"}]
    found = context("think_forced_open", messages, enable_thinking=True,
                    continue_final_message="content")
    assert found.tail == "<think>\nplan</think>Hello, "


def test_continuing_the_reasoning_leaves_it_open() -> None:
    messages = [*USER, {"role": "assistant", "content": "", "reasoning_content": "pla"}]
    found = context("think_forced_open", messages, enable_thinking=True,
                    continue_final_message="reasoning")
    analysis = analyze(load_template_file(FORMATS / "think_forced_open.jinja"))
    parser = generate_parser(analysis, ParseOptions.make(enable_thinking=True), prompt=found)
    message = parser.parse("n</think>Done.")
    # (the newline after the prompt's `<think>` is its layout, not reasoning)
    assert (message.reasoning_content, message.content) == ("plan", "Done.")


def test_continuing_without_reasoning_markers_prefills_the_content() -> None:
    messages = [*USER, {"role": "assistant", "content": "Hello, "}]
    found = context("plain", messages, continue_final_message="content")
    assert found.tail == "Hello, "
