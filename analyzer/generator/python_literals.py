"""A Python literal as a call argument: delimited while streaming, converted to JSON once whole.

`PythonLiteral` finds where an argument value of `f(key=VALUE, ...)` ends: at the first `,` or
`)` outside brackets and strings, strings being Python's (single, double or triple quotes,
backslash escapes, any prefix such as r or u). It never decides whether the text is a valid
literal, so a one-shot parse and a stream agree on every input; `PythonLiteralDialect.to_json`
converts the complete text with `ast.literal_eval` (ints with underscores, `.5`, tuples,
implicit string concatenation and all) and keeps text that is no literal (a bare word) as a
JSON string, as written: data is never dropped.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from analyzer.peg import Expr
from analyzer.peg.state import MatchState

# Outside strings only these characters matter; everything else is skipped in one step.
SPECIAL = re.compile(r"[^'\"()\[\]{},\\]*")
BODY = {"'": re.compile(r"[^'\\]*"), '"': re.compile(r'[^"\\]*')}
CLOSERS = {")": "(", "]": "[", "}": "{"}
# Strings, and JSON's spelling of three words (templates that print values with tojson).
TOKENS = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\b(?:true|false|null)\b""",
                    re.DOTALL)
PYTHON_SPELLING = {"true": "True", "false": "False", "null": "None"}
# Templates may write newlines and tabs raw inside quotes, which Python does not allow.
RAW_CONTROLS = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})
DONE, MORE, BAD = range(3)  # scan outcomes: the value ended, the text did, a bracket mismatched


@dataclass(frozen=True)
class LiteralState:
    """Where a scan stopped: open brackets, the quote of the string it is inside, and
    whether some of the value was already read (a value may not be empty)."""

    stack: str = ""
    quote: str = ""  # ', ", ''' or """ when inside a string
    started: bool = False


START = LiteralState()


class PythonLiteral(Expr):
    """Match the text of one argument value, up to the `,` or `)` that ends it."""

    __slots__ = ("state",)

    def __init__(self, state: LiteralState = START) -> None:
        self.state = state

    def match(self, st: MatchState, pos: int) -> int:
        status, end, state = scan(st.text, pos, self.state, final=not st.partial)
        if status == BAD:
            return st.fail(end, "a closing bracket that matches the open one")
        if status == DONE:
            return end if end > pos or self.state.started else st.fail(pos, "a value")
        if st.partial:
            resume = self if state == self.state and end == pos else PythonLiteral(state)
            return st.need(resume, end, st.n)
        if state.quote or state.stack:  # the output ended inside it (cut off by max tokens)
            # Where the text ran out, not where the value began: a stream that read the value
            # in earlier chunks fails there too, having dropped the text before it.
            return st.fail(end, "the end of a Python literal (a string or bracket is open)")
        return end if end > pos or self.state.started else st.fail(pos, "a value")

    def describe(self) -> str:
        return "python-literal" + ("(continued)" if self.state.started else "")


def scan(text: str, pos: int, state: LiteralState,
         final: bool) -> tuple[int, int, LiteralState]:
    """Scan from pos: DONE at the `,`/`)` ending the value, MORE where to resume, or BAD."""
    stack, quote, n = state.stack, state.quote, len(text)
    while pos < n:
        if quote:
            pos, quote = scan_string(text, pos, quote)
            if quote:
                return MORE, pos, LiteralState(stack, quote, True)
            continue
        pos = SPECIAL.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            break
        char = text[pos]
        if char in "'\"":
            if not final and n - pos < 3 and text.startswith(char * (n - pos), pos):
                return MORE, pos, LiteralState(stack, "", True)  # a triple quote may open
            quote = char * 3 if text.startswith(char * 3, pos) else char
            pos += len(quote)
        elif char in "([{":
            stack += char
            pos += 1
        elif char in ")]}":
            if not stack and char == ")":
                return DONE, pos, START
            if not stack or stack[-1] != CLOSERS[char]:
                return BAD, pos, START
            stack = stack[:-1]
            pos += 1
        elif char == "," and not stack:
            return DONE, pos, START
        else:
            pos += 1  # a comma inside brackets, or a backslash outside strings
    # quote is still open only when the text ran out before the loop began (a stream's run
    # from inside a string over no new text, at its finish): the string stays open.
    return MORE, pos, LiteralState(stack, quote, True)


def scan_string(text: str, pos: int, quote: str) -> tuple[int, str]:
    """Scan a string body; return where it ended (quote "") or where to resume (quote kept)."""
    body, n = BODY[quote[0]], len(text)
    while True:
        pos = body.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            return pos, quote
        if text[pos] == "\\":
            if pos + 1 >= n:
                return pos, quote  # the escaped character has not arrived yet
            pos += 2
        elif text.startswith(quote, pos):
            return pos + len(quote), ""
        elif n - pos < len(quote) and quote.startswith(text[pos:]):
            return pos, quote  # the closing triple quote may be arriving
        else:
            pos += 1


@dataclass(frozen=True)
class PythonLiteralDialect:
    """Convert a complete argument value to JSON (the mapper asks once the value is whole)."""

    def to_json(self, text: str) -> str:
        """Return the value's JSON text; text that is no literal stays a string (as written:
        the closing a cut-off value is given only serves its reading as a literal)."""
        source = text.strip()
        whole = closed(source)
        for spelling in (whole, TOKENS.sub(pythonic, whole)):
            try:
                return json.dumps(jsonable(ast.literal_eval(spelling)), ensure_ascii=False,
                                  allow_nan=False)
            # Untrusted text: a syntax error, a too-deep nesting or a too-long int all mean
            # the text is not a usable literal.
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
        return json.dumps(source, ensure_ascii=False)


def closed(text: str) -> str:
    """Close the string and brackets a value cut off at the end of the output left open (a
    broken call's held value, healed as JSON arguments are); a whole value is unchanged."""
    status, _, state = scan(text, 0, START, final=True)
    if status != MORE or not (state.quote or state.stack):
        return text
    if state.quote and text.endswith("\\") and not text.endswith("\\\\"):
        text = text[:-1]  # an escape cut in half
    return text + state.quote + "".join({"(": ")", "[": "]", "{": "}"}[c]
                                        for c in reversed(state.stack))


def pythonic(token: re.Match[str]) -> str:
    """Spell true/false/null as Python does; escape raw control characters in strings."""
    text = token.group()
    return PYTHON_SPELLING.get(text) or text.translate(RAW_CONTROLS)


def jsonable(value: Any) -> Any:
    """Return a literal's value with JSON's types (tuples and sets as lists, bytes as text)."""
    if isinstance(value, dict):
        return {key if isinstance(key, str) else json.dumps(jsonable(key)): jsonable(item)
                for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, complex):
        raise ValueError("a complex number has no JSON form")
    return value
