"""Healing: the text that closes a JSON object a call's arguments broke off inside.

A stream has already sent the arguments written so far, so a broken call can only be closed
by appending: close the open string, complete a cut literal, give a dangling key a null
value, and close the open arrays and objects.
"""

from __future__ import annotations

import json

LITERALS = ("true", "false", "null")


def healing(text: str) -> str:
    """Return what to append to text (a JSON object's beginning) so that it is whole."""
    if not text.strip():
        return "{}"
    stack, in_string, escaped, last = scan(text)
    tail = ""
    if in_string:
        tail += ("\\" if escaped else "") + '"'
        last = '"'
    tail += completed_token(text) if not in_string else ""
    tail += dangling(text + tail, stack, last)
    tail += "".join("}" if opener == "{" else "]" for opener in reversed(stack))
    return tail


def scan(text: str) -> tuple[list[str], bool, bool, str]:
    """Return the open brackets, whether a string is open (and ends in a backslash), and the
    last significant character outside strings."""
    stack: list[str] = []
    in_string = escaped = False
    last = ""
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string, last = False, '"'
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
            last = char
        elif char in "}]":
            if stack:
                stack.pop()
            last = char
        elif not char.isspace():
            last = char
    return stack, in_string, escaped, last


def completed_token(text: str) -> str:
    """Complete a literal or a number the text stops inside (`tru` -> `e`, `1.` -> `0`)."""
    word = text[len(text.rstrip("abcdefghijklmnopqrstuvwxyz")):]
    for literal in LITERALS:
        if word and literal.startswith(word):
            return literal[len(word):]
    return "0" if text and text[-1] in "-.eE+" and not word.strip("eE") else ""


def dangling(text: str, stack: list[str], last: str) -> str:
    """Give a key without a value `null`, a trailing comma its missing item."""
    if last == ":":
        return " null"
    if last == ",":
        return '"": null' if stack and stack[-1] == "{" else "null"
    if stack and stack[-1] == "{" and last == '"' and key_pending(text):
        return ": null"
    return ""


def key_pending(text: str) -> bool:
    """Tell whether the object's last string is a key still waiting for its colon."""
    stripped = text.rstrip()
    head = stripped[: stripped.rfind('"', 0, len(stripped) - 1)].rstrip()
    return head.endswith(("{", ","))


def whole_object(text: str) -> bool:
    """Tell whether text is one JSON object."""
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False
