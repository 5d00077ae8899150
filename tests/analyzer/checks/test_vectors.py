"""llama.cpp's parse vectors: the whole file through the generated parsers, the comparison
rules, and streaming equal to one-shot parsing on every vector."""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from analyzer.checks.vectors import (
    Vector,
    VectorFormatError,
    differences,
    load_vectors,
    run_vector,
    template_analysis,
    vector_prompt,
)
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.parsing.message import Message, ToolCall
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import accumulate

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared"
VECTORS = SHARED / "corpus" / "vectors" / "llamacpp-test-chat.jsonl"
TEMPLATES = SHARED / "corpus" / "templates"
# Every vector passes; a failure names its vectors in the assertion message.
EXPECTED_PASSES = 427


@cache
def all_vectors() -> tuple[Vector, ...]:
    if not VECTORS.is_file():
        pytest.skip(f"shared vectors not found at {VECTORS}")
    return tuple(load_vectors(VECTORS))


def vector(**fields: Any) -> Vector:
    """A hand-made vector (only what the comparison reads)."""
    base: dict[str, Any] = {
        "seq": 1,
        "id": None,
        "template": "t.jinja",
        "options": ParseOptions(),
        "messages_json": "[]",
        "output": "",
        "partial": False,
        "expected": {},
    }
    return Vector(**{**base, **fields})


def test_the_whole_vector_file_passes() -> None:
    results = [run_vector(v, TEMPLATES) for v in all_vectors()]
    failed = [f"{r.vector.seq} {r.vector.template}" for r in results if not r.passed]
    assert len(results) == 427
    assert len(results) - len(failed) >= EXPECTED_PASSES, f"failed: {failed}"


def test_content_compares_trimmed_and_null_equals_empty() -> None:
    case = vector(expected={"content": "  Hi\n", "reasoning_content": None, "tool_calls": []})
    assert differences(case, Message(content="Hi")) == []


def test_a_content_difference_is_described() -> None:
    case = vector(expected={"content": "Hi"})
    assert differences(case, Message(content="Ho")) == [
        "content:\n    expected 'Hi'\n    actual   'Ho'"
    ]


def test_arguments_compare_as_json_values_and_ids_only_when_expected() -> None:
    expected = {"tool_calls": [{"name": "f", "arguments": '{"a": 1, "b": [2]}', "id": ""}]}
    actual = Message(tool_calls=(ToolCall("f", '{"b":[2],"a":1}', "call_1"),))
    assert differences(vector(expected=expected), actual) == []


def test_a_wrong_id_is_reported_when_one_is_expected() -> None:
    expected = {"tool_calls": [{"name": "f", "arguments": "{}", "id": "7"}]}
    actual = Message(tool_calls=(ToolCall("f", "{}", "8"),))
    assert differences(vector(expected=expected), actual) == [
        "tool_calls[0].id: expected '7', actual '8'"
    ]


def test_unfinished_arguments_are_not_compared_in_partial_cases() -> None:
    expected = {"tool_calls": [{"name": "f", "arguments": '{"a": ', "id": ""}]}
    actual = Message(tool_calls=(ToolCall("f", '{"a":'),))
    assert differences(vector(expected=expected, partial=True), actual) == []
    assert differences(vector(expected=expected), actual) != []


def test_a_missing_call_is_reported_with_both_lists() -> None:
    expected = {"tool_calls": [{"name": "f", "arguments": "{}"}]}
    assert differences(vector(expected=expected), Message()) == [
        "tool_calls: expected 1 ['f({})'], actual 0 []"
    ]


def test_a_line_that_is_not_a_vector_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text('{"seq": 0}\n', encoding="utf-8")
    with pytest.raises(VectorFormatError, match="line 1: not a parse vector"):
        list(load_vectors(path))


def test_a_vector_whose_template_is_missing_fails_with_its_error(tmp_path: Path) -> None:
    result = run_vector(vector(template="missing.jinja"), tmp_path)
    assert not result.passed
    assert result.error is not None and "cannot read the file" in result.error


# Streaming equals one-shot -----------------------------------------------------------------


def parser_for(case: Vector) -> GeneratedParser:
    path = TEMPLATES / case.template
    prompt = vector_prompt(path, case.messages_json, case.options)
    return generate_parser(template_analysis(path), case.options, prompt=prompt)


def streamed(parser: GeneratedParser, chunks: list[str]) -> Message:
    stream = parser.stream()
    deltas = [d for chunk in chunks for d in stream.feed(chunk)] + stream.finish()
    return accumulate(deltas)


def splits(text: str, rng: random.Random) -> list[list[str]]:
    """Two pieces cut at every position for short outputs; random chunkings for long ones."""
    if len(text) <= 160:
        return [[text[:cut], text[cut:]] for cut in range(len(text) + 1)]
    chunkings = []
    for _ in range(12):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 8)))
        chunkings.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    return chunkings


def test_streaming_equals_one_shot_on_every_vector() -> None:
    rng = random.Random(20261121)
    mismatches = []
    for case in all_vectors():
        if case.partial:
            continue
        parser = parser_for(case)
        one_shot = parser.parse(case.output)
        for chunks in [list(case.output), *splits(case.output, rng)]:
            if streamed(parser, chunks) != one_shot:
                mismatches.append((case.seq, json.dumps(chunks)[:120]))
                break
    assert mismatches == []


def test_every_prefix_of_every_output_only_grows() -> None:
    shrinking = []
    for case in all_vectors():
        parser = parser_for(case)
        previous = Message()
        for cut in range(len(case.output) + 1):
            current = parser.parse(case.output[:cut], partial=True)
            if not grows(previous, current):
                shrinking.append((case.seq, cut))
                break
            previous = current
    assert shrinking == []


def grows(before: Message, after: Message) -> bool:
    """Tell whether after extends before (text, calls and arguments only ever appended)."""
    if not (
        after.content.startswith(before.content)
        and after.reasoning_content.startswith(before.reasoning_content)
        and len(after.tool_calls) >= len(before.tool_calls)
    ):
        return False
    # A call may be listed before its name is read (its id came first): the name then appears.
    return all(
        b.name in ("", a.name) and a.arguments.startswith(b.arguments)
        for b, a in zip(before.tool_calls, after.tool_calls, strict=False)
    )
