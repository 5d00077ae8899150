"""Deviations: every place where a model's output departs from what the template renders.

A parse never fails a whole message for one bad part and never accepts a malformed part in
silence: it reads what it can and lists, for each departure, what the template's format
expected there, what was found, and what the parser did with it. A clean output (the
template's exact rendering) has no deviation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from analyzer.peg import Notice, ParseProblem


class DeviationKind(StrEnum):
    """What departed from the template's format (a closed set: tests and pages rely on it)."""

    # Reasoning
    REPEATED_REASONING_START = "repeated_reasoning_start"  # opener doubled / already in prompt
    REASONING_LABEL_MISSING = "reasoning_label_missing"  # special token without its fixed label
    UNCLOSED_REASONING = "unclosed_reasoning"  # a tool call started inside reasoning, never closed
    CONTENT_AROUND_REASONING = "content_around_reasoning"  # content, reasoning block, content
    STRAY_REASONING_MARKER = "stray_reasoning_marker"  # e.g. `</think>` with no block open
    # Tool-call framing
    CALL_WRAPPER = "call_wrapper"  # markdown fence or a wrapper token pair the template lacks
    CALL_SEPARATOR = "call_separator"  # JSON calls separated by `;` or newlines
    MISSING_CONTROL_TOKEN = "missing_control_token"  # e.g. name directly followed by arguments
    MISSING_NAMESPACE = "missing_namespace"  # e.g. `name:0` for `functions.name:0`
    MISSING_CLOSE = "missing_close"  # a closing tag left out (parameter, function, call)
    MISMATCHED_CLOSE = "mismatched_close"  # a closing tag of another element
    # Tool-call contents
    ARGUMENTS_KEY = "arguments_key"  # arguments under another key (`parameters`)
    ARGUMENTS_NOT_OBJECT = "arguments_not_object"  # a string (or other) where an object goes
    JSON_BODY = "json_body"  # a JSON body where the template renders tagged / Python calls
    UNKNOWN_FUNCTION = "unknown_function"  # a call of a function the request did not declare
    UNKNOWN_PARAMETER = "unknown_parameter"  # an argument the function does not declare
    UNKNOWN_MEMBER = "unknown_member"  # a call object's member the template does not write
    MALFORMED_CALL = "malformed_call"  # a call that could not be read
    # End of output
    TRAILING_EOS = "trailing_eos"  # the tokenizer's end-of-sequence text at the very end


class DeviationAction(StrEnum):
    """What the parser did with the departing text."""

    ACCEPTED = "accepted"  # read as the template's form would have been (normalized)
    KEPT_AS_CONTENT = "kept_as_content"  # left in the message content, verbatim
    DROPPED = "dropped"  # removed from the message (e.g. a trailing end-of-sequence text)


@dataclass(frozen=True)
class Deviation:
    """One departure from the template's format, located in the model's output."""

    kind: DeviationKind
    action: DeviationAction
    offset: int  # in the parsed output (0-based characters)
    line: int  # 1-based
    column: int  # 1-based
    expected: str  # what the template's format has there
    found: str  # what the output has there (a short excerpt)
    context: str = ""  # the output's line with a caret under the offset

    @property
    def message(self) -> str:
        """Say in one line where, what was expected, what was found, and what was done."""
        return (f"line {self.line}, column {self.column} (offset {self.offset}): {self.kind}: "
                f"expected {self.expected}, found {self.found}; {self.action.replace('_', ' ')}")

    def to_dict(self) -> dict[str, Any]:
        """Return the canonical JSON form."""
        return {"kind": str(self.kind), "action": str(self.action), "offset": self.offset,
                "line": self.line, "column": self.column, "expected": self.expected,
                "found": self.found, "context": self.context, "message": self.message}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Deviation:
        """Inverse of `to_dict` (the message is derived, not read)."""
        return cls(DeviationKind(data["kind"]), DeviationAction(data["action"]), data["offset"],
                   data["line"], data["column"], data["expected"], data["found"],
                   data.get("context", ""))


def locate(text: str, offset: int) -> tuple[int, int, str]:
    """Line, column (both 1-based) and the caret context of an offset in text."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_text = text[line_start: len(text) if line_end < 0 else line_end]
    column = offset - line_start + 1
    return text.count("\n", 0, offset) + 1, column, f"{line_text}\n{' ' * (column - 1)}^"


def deviation_at(text: str, offset: int, kind: DeviationKind, action: DeviationAction,
                 expected: str, found: str) -> Deviation:
    """Build a deviation at an offset of text, with its line, column and caret context."""
    line, column, context = locate(text, offset)
    return Deviation(kind, action, offset, line, column, expected, found, context)


def from_notice(notice: Notice) -> Deviation:
    """Turn a grammar's notice (a tolerance that fired) into a deviation."""
    note = notice.note
    return Deviation(DeviationKind(note.kind), DeviationAction(note.action), notice.offset,
                     notice.line, notice.column, note.expected, notice.found, notice.context)


# A failure where only names were expected: the call names a function the request lacks.
NAME = re.compile(r"`[A-Za-z_][\w.\-]*`")


# What a call's name was expected to be when the request declares no function at all.
NO_FUNCTIONS = "a declared function (the request declares none)"


def names_only(expected: tuple[str, ...]) -> bool:
    """Tell whether a failure expected only function names (an undeclared one stood there)."""
    if expected == (NO_FUNCTIONS,):
        return True
    return bool(expected) and all(NAME.fullmatch(e) for e in expected)


def from_problem(problem: ParseProblem) -> Deviation:
    """Turn a marker kept as text (what it started did not parse) into a deviation: an
    unknown function when only function names were expected there, else a malformed call."""
    expected = " or ".join(problem.expected) if problem.expected else "a call"
    kind = DeviationKind.UNKNOWN_FUNCTION if names_only(problem.expected) \
        else DeviationKind.MALFORMED_CALL
    return Deviation(kind, DeviationAction.KEPT_AS_CONTENT, problem.offset, problem.line,
                     problem.column, expected, problem.found, problem.context)


def collected(problems: Iterable[ParseProblem], notices: Iterable[Notice]) -> tuple[Deviation, ...]:
    """Return the deviations of a parse's problems and notices, in output order."""
    found = [*map(from_problem, distinct(problems)), *map(from_notice, notices)]
    return tuple(sorted(found, key=lambda d: d.offset))


def distinct(problems: Iterable[ParseProblem]) -> list[ParseProblem]:
    """Keep one problem per failure: a marker kept as text inside what an earlier marker's
    attempt read before it failed (`<tool_call>` then `<function=`, a section then its
    per-call marker) reports that same failure again: the one that read farthest says most."""
    kept: list[ParseProblem] = []
    for problem in sorted(problems, key=lambda found: found.kept_offset):
        if kept and problem.kept_offset <= kept[-1].offset:
            kept[-1] = max(kept[-1], problem, key=lambda found: found.offset)
        else:
            kept.append(problem)
    return kept


def shifted(deviation: Deviation, before: str) -> Deviation:
    """Return the deviation placed after `before` is removed from the front of the text."""
    line = deviation.line - before.count("\n")
    column = deviation.column
    if line == 1:
        column -= len(before) - before.rfind("\n") - 1
    return replace(deviation, offset=deviation.offset - len(before), line=line, column=column)


def in_output(deviations: Iterable[Deviation], tail: str) -> tuple[Deviation, ...]:
    """Place deviations found in `tail + output` in the output (those in the tail go)."""
    return tuple(shifted(d, tail) for d in deviations if d.offset >= len(tail))
