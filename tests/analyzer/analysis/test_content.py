"""C1: content wrappers, always or only after reasoning."""

from __future__ import annotations

from pathlib import Path

from analyzer.analysis.pipeline import analyze
from analyzer.model import ContentMode

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def content_of(name: str):  # type: ignore[no-untyped-def]
    return analyze((FORMATS / f"{name}.jinja").read_text()).content


def test_plain_content_has_no_markers() -> None:
    content = content_of("plain")
    assert (content.mode, content.start, content.end) == (ContentMode.PLAIN, "", "")


def test_always_wrapped_content() -> None:
    content = content_of("content_wrapped")
    assert (content.mode, content.start, content.end) == (
        ContentMode.ALWAYS_WRAPPED, "<response>", "</response>")


def test_content_wrapped_only_after_reasoning() -> None:
    content = content_of("content_wrapped_with_reasoning")
    assert (content.mode, content.start, content.end) == (
        ContentMode.WRAPPED_WITH_REASONING, "<answer>", "</answer>")


def test_an_end_of_turn_marker_does_not_wrap_content() -> None:
    source = ("{% for m in messages %}<|{{ m.role }}|>\n{% if m.tool_calls %}<calls>"
              "{{ m.tool_calls | tojson }}</calls><|eot|>{% else %}<x>{{ m.content }}\n<|eot|>"
              "{% endif %}{% endfor %}")
    assert content_of_source(source).mode == ContentMode.PLAIN


def content_of_source(source: str):  # type: ignore[no-untyped-def]
    return analyze(source).content


def test_requires_nonnull_content_comes_from_the_probe() -> None:
    source = ("{% for m in messages %}{{ m.content }}{% for c in m.tool_calls or [] %}"
              "<c>{{ c.function.name }}{{ c.function.arguments | tojson }}</c>{% endfor %}"
              "{% endfor %}")
    assert content_of_source(source).requires_nonnull_content


def test_c2_reads_the_markers_that_open_and_close_an_assistant_turn() -> None:
    content = content_of("plain")  # <|assistant|>answer<|end|>
    assert (content.turn_start, content.turn_end) == ("<|assistant|>", "<|end|>")


def test_the_next_turns_opener_is_not_a_turn_end() -> None:
    source = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
              "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    assert content_of_source(source).turn_end == ""


# Reasoning is a turn of its own; the answer's turn repeats the header, then `<|content|>`.
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "templates"
OWN_TURN = FIXTURES / "reasoning_own_turn.jinja"


def test_a_content_opener_after_a_shared_turn_header_wraps_the_answer() -> None:
    # `<|begin|>assistant` is in both variants of C1; only `<|content|>` is the answer's own.
    # Its end `<|end|>` also ends reasoning: a shared turn end still closes the content.
    content = analyze(OWN_TURN.read_text()).content
    assert (content.mode, content.start, content.end) == (
        ContentMode.ALWAYS_WRAPPED, "<|content|>", "<|end|>")
