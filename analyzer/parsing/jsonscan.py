"""Find JSON (or Python-literal) objects inside rendered text."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class FoundObject:
    """A decoded object and its [start, end) span in the text it came from."""

    value: Any
    start: int
    end: int
    python_style: bool  # written with single quotes / Python literals


def quoted_after_opener(text: str, needle: str, low: int = 0, high: int | None = None) -> str:
    """Return the quote used where needle sits quoted right after `{`, `:` or `,`; else ""."""
    region = text[low:high]
    for quote in ('"', "'"):
        if re.search(r"[{:,\[]\s*" + re.escape(quote + needle + quote), region):
            return quote
    return ""


def _balanced_end(text: str, start: int) -> int:
    """Return the index after the brace that closes text[start], ignoring quoted braces."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            escaped = char == "\\" and not escaped
            if char == quote and not escaped:
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return -1


def decode_object_at(text: str, start: int) -> FoundObject | None:
    """Decode the JSON or Python-literal object opening at text[start], if it is one."""
    try:
        value, end = _DECODER.raw_decode(text, start)
        return FoundObject(value, start, end, False)
    except json.JSONDecodeError:
        pass
    end = _balanced_end(text, start)
    if end < 0:
        return None
    try:
        value = ast.literal_eval(text[start:end])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return FoundObject(value, start, end, True)


def enclosing_object(
    text: str, pos: int, low: int = 0, high: int | None = None
) -> FoundObject | None:
    """Return the outermost decodable object within [low, high) that covers position pos."""
    top = len(text) if high is None else high
    best: FoundObject | None = None
    index = text.rfind("{", low, pos + 1)
    while index >= low:
        found = decode_object_at(text, index)
        if found is not None and found.end > pos and found.end <= top:
            best = found
        index = text.rfind("{", low, index) if index > low else -1
    return best
