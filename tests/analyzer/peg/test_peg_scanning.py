"""Tests for analyzer/peg/scanning.py: the tail a scan holds back at the end of partial input.

Each answer is checked against the definition read literally (every tail, from the earliest),
on random texts built from the markers' own characters and pieces.
"""

from __future__ import annotations

import random
import re

import pytest

from analyzer.peg.scanning import beginnings_pattern, held_back

MARKER_SETS = (
    ("</parameter>", "\n</parameter>", "<parameter=unit>", "<parameter=days>", "</function>"),
    ("<|tool_call_end|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>"),
    ("]]>", "]]", "]"),  # markers that begin one another, one a single character
    ("<<a>>", "<<a>b", "<"),  # a lead repeated inside a marker
    ("x",),  # no proper beginning at all
)


def longest_held_tail(text: str, start: int, end: int, markers: tuple[str, ...]) -> int:
    """held_back's definition: the longest tail of text[start:end] shorter than a marker it
    begins (0: none)."""
    for at in range(start, end):
        tail = text[at:end]
        if any(len(tail) < len(m) and m.startswith(tail) for m in markers):
            return end - at
    return 0


def random_texts(markers: tuple[str, ...], count: int, seed: int) -> list[str]:
    """Texts of the markers' characters, whole markers and cut ones."""
    rng = random.Random(seed)
    alphabet = sorted({c for m in markers for c in m} | {" ", "\n", "v"})
    pieces = [*markers, *(m[:rng.randint(1, len(m))] for m in markers for _ in range(3))]
    return ["".join(rng.choice(pieces) if rng.random() < 0.3 else rng.choice(alphabet)
                    for _ in range(rng.randint(0, 10))) for _ in range(count)]


@pytest.mark.parametrize("markers", MARKER_SETS)
def test_held_back_is_the_longest_tail_that_begins_a_marker(markers: tuple[str, ...]) -> None:
    for text in random_texts(markers, 600, seed=len(markers)):
        for start in range(len(text) + 1):
            expected = longest_held_tail(text, start, len(text), markers)
            assert held_back(text, start, len(text), markers) == expected, (text, start)


@pytest.mark.parametrize("markers", MARKER_SETS)
def test_beginnings_pattern_finds_the_longest_held_tail(markers: tuple[str, ...]) -> None:
    # The earliest match of the trie, searched up to the end, is held_back's tail.
    pattern = re.compile(beginnings_pattern(markers))
    for text in random_texts(markers, 600, seed=7 * len(markers)):
        for start in range(len(text) + 1):
            found = pattern.search(text, start, len(text))
            held = len(text) - found.start() if found else 0
            assert held == longest_held_tail(text, start, len(text), markers), (text, start)


def test_beginnings_pattern_holds_no_whole_marker_and_no_empty_tail() -> None:
    pattern = re.compile(beginnings_pattern(("</v>", "<p>")))
    assert pattern.search("a</v>") is None  # a whole marker is no beginning
    assert pattern.search("a") is None
    assert pattern.search("a</v").start() == 1
    assert re.compile(beginnings_pattern(("x", "y"))).search("xy") is None
