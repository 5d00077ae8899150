"""What a captured span means to the mapper."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """The part of a chat message a capture feeds."""

    REASONING = "reasoning"
    CONTENT = "content"
    TOOL_OPEN = "tool-open"
    TOOL_CLOSE = "tool-close"
    TOOL_NAME = "tool-name"
    TOOL_ARGS = "tool-args"
    CALL_ID = "call-id"
    ARG_NAME = "arg-name"
    ARG_STRING_VALUE = "arg-string-value"
    ARG_JSON_VALUE = "arg-json-value"
    PROBLEM = "problem"  # text kept as text although a marker in it promised structure
    DEVIATION = "deviation"  # text read although it departs from the template's form (a Note)


# Event flags, kept as int bits because events are built in the hot loop.
PARTIAL = 1  # the span may still grow: input ended inside it
CONTINUED = 2  # the span continues the previous span of the same capture
PYTHON = 4  # the span is a python-flavoured value (single quotes, True/False/None)
QUOTED = 8  # the span is a JSON string literal, quotes included
