"""A resumable scanner that tells whether text is a JSON value, a prefix of one, or neither.

Used where the C decoder cannot answer: partial input (is this an unfinished value?), the
python-dict flavour (single quotes, True/False/None), and streams, which resume the scan
where the previous chunk stopped instead of rescanning the value. Tokens are matched with
compiled regexes, so the Python loop runs once per token, not once per character.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# What the scanner expects next.
VALUE, VALUE_OR_CLOSE, KEY, KEY_OR_CLOSE, COLON, COMMA_OR_CLOSE, DONE = range(7)
# Scan outcomes.
COMPLETE, INCOMPLETE, INVALID = range(3)

WHITESPACE = re.compile(r"[ \t\r\n]*")
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
NUMBER_PREFIX = re.compile(r"-?(?:0|[1-9][0-9]*)?(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?")
HEX_PREFIX = re.compile(r"[0-9a-fA-F]{0,4}")
# A string's body up to its end or an escape that is not complete and valid (one regex call
# reads every complete escape: a stream's chunk inside a string is one call).
STRICT_BODY = re.compile(r'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*')
PYTHON_BODY = {
    "'": re.compile(r"[^'\\]*(?:\\[\s\S][^'\\]*)*"),
    '"': re.compile(r'[^"\\]*(?:\\[\s\S][^"\\]*)*'),
}
SPACE_CHARS = " \t\r\n"
KEYS = (KEY, KEY_OR_CLOSE)
VALUES = (VALUE, VALUE_OR_CLOSE)
STRICT_WORDS = ("true", "false", "null")
PYTHON_WORDS = ("true", "false", "null", "True", "False", "None")
CLOSER = {"{": "}", "[": "]"}
EXPECTED = {
    VALUE: "a JSON value",
    VALUE_OR_CLOSE: "a JSON value or `]`",
    KEY: "a quoted key",
    KEY_OR_CLOSE: "a quoted key or `}`",
    COLON: "`:`",
    COMMA_OR_CLOSE: "`,` or a closing bracket",
}


class ScanState(NamedTuple):
    """Where a scan stopped: open containers, what comes next, and the open string if any."""

    stack: str = ""
    expect: int = VALUE
    quote: str = ""
    in_key: bool = False


INITIAL = ScanState()


class ScanOutcome(NamedTuple):
    """COMPLETE (pos: end of value), INCOMPLETE (pos: where to resume), INVALID (pos: error)."""

    status: int
    pos: int
    state: ScanState
    expected: str = ""


# States and outcomes are built by tuple.__new__ with every field given: a stream scans every
# chunk that leaves a string (`JsonContinue.read_on`), and there a frozen dataclass (or a named
# tuple's Python __new__) costs more than the scan's own regex calls.
NEW = tuple.__new__


def after_value(stack: str) -> int:
    """Return what follows a finished value inside these containers."""
    return COMMA_OR_CLOSE if stack else DONE


def scan_string(text: str, pos: int, quote: str, python: bool) -> tuple[int, int]:
    """Scan a string body from pos (after the opening quote); return (status, pos)."""
    body = PYTHON_BODY[quote] if python else STRICT_BODY
    end = len(text)
    while True:
        pos = body.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= end:
            return INCOMPLETE, pos
        char = text[pos]
        if char == quote:
            return COMPLETE, pos + 1
        if char != "\\":
            return INVALID, pos  # a control character in a strict string
        if pos + 1 >= end:
            return INCOMPLETE, pos  # resume before the backslash: the escape is unknown yet
        status = escape_status(text, pos, python)
        if status == INVALID or status == INCOMPLETE:
            return status, pos
        pos += 6 if text[pos + 1] == "u" and not python else 2


def escape_status(text: str, pos: int, python: bool) -> int:
    """Check the escape sequence at pos (a backslash with at least one char after it)."""
    char = text[pos + 1]
    if python or char in '"\\/bfnrt':
        return COMPLETE
    if char != "u":
        return INVALID
    digits = HEX_PREFIX.match(text, pos + 2).end() - (pos + 2)  # type: ignore[union-attr]
    if digits == 4:
        return COMPLETE
    return INCOMPLETE if pos + 2 + digits == len(text) else INVALID


class Scanner:
    """Scan one JSON (or python-dict flavoured) value, resumably."""

    def __init__(self, python: bool, ended: bool = False) -> None:
        self.python = python
        # The text ends for good where it ends (a partial scan of a finished output): a
        # number that touches the end is whole; the value around it may still be unfinished.
        self.ended = ended
        self.words = PYTHON_WORDS if python else STRICT_WORDS
        self.quotes = "'\"" if python else '"'
        # Each quote's string body (up to the closing quote or an escape to check).
        self.bodies = PYTHON_BODY if python else {'"': STRICT_BODY}

    def scan(self, text: str, pos: int, state: ScanState, final: bool) -> ScanOutcome:
        """Scan from pos in state; with final, the input ends at len(text) for good."""
        stack, expect = state.stack, state.expect
        if state.quote:
            status, pos = scan_string(text, pos, state.quote, self.python)
            if status != COMPLETE:
                return self._stop(status, pos, state, final)
            expect = COLON if state.in_key else after_value(stack)
            if expect == DONE:
                return NEW(ScanOutcome, (COMPLETE, pos, INITIAL, ""))
        # The usual tokens are read here, in one frame (a stream scans most chunks that leave
        # a string: a call per token costs more than the token's regex); numbers, words and
        # whatever ends the scan go through _token.
        size, bodies = len(text), self.bodies
        while True:
            if pos < size and text[pos] in SPACE_CHARS:
                pos = WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= size:
                return self._stop(
                    INCOMPLETE, pos, NEW(ScanState, (stack, expect, "", False)), final
                )
            char = text[pos]
            if expect == COMMA_OR_CLOSE:
                if char == ",":
                    pos += 1
                    expect = KEY if stack[-1] == "{" else VALUE
                    continue
            elif expect == COLON:
                if char == ":":
                    pos += 1
                    expect = VALUE
                    continue
            elif char in bodies:  # a string: its body, then its closing quote or the end
                end = bodies[char].match(text, pos + 1).end()  # type: ignore[union-attr]
                if end >= size:  # unfinished: resume at the end, inside it
                    state = NEW(ScanState, (stack, expect, char, expect in KEYS))
                    return self._stop(INCOMPLETE, end, state, final)
                if text[end] == char:
                    pos = end + 1
                    expect = COLON if expect in KEYS else (COMMA_OR_CLOSE if stack else DONE)
                    if expect == DONE:
                        return NEW(ScanOutcome, (COMPLETE, pos, INITIAL, ""))
                    continue
            elif char == "{" and expect in VALUES:
                pos += 1
                stack += char
                expect = KEY_OR_CLOSE
                continue
            outcome = self._token(text, pos, stack, expect, final)
            if isinstance(outcome, ScanOutcome):
                return outcome
            pos, stack, expect = outcome
            if expect == DONE:
                return NEW(ScanOutcome, (COMPLETE, pos, INITIAL, ""))

    def _stop(self, status: int, pos: int, state: ScanState, final: bool) -> ScanOutcome:
        """Report where the scan stopped; at the very end an unfinished value is invalid."""
        if status == INCOMPLETE and final:
            return NEW(ScanOutcome, (INVALID, pos, state, "the rest of the JSON value"))
        expected = "a valid string character or escape" if state.quote else EXPECTED[state.expect]
        return NEW(ScanOutcome, (status, pos, state, expected))

    def _token(
        self, text: str, pos: int, stack: str, expect: int, final: bool
    ) -> ScanOutcome | tuple[int, str, int]:
        """Consume one token; return (pos, stack, expect) or the outcome that ends the scan."""
        char = text[pos]
        if expect == COLON:
            return (pos + 1, stack, VALUE) if char == ":" else self._invalid(pos, stack, expect)
        if expect == COMMA_OR_CLOSE:
            if char == ",":
                return pos + 1, stack, KEY if stack[-1] == "{" else VALUE
            if char == CLOSER[stack[-1]]:
                return pos + 1, stack[:-1], after_value(stack[:-1])
            return self._invalid(pos, stack, expect)
        if char in self.quotes:
            return self._string(text, pos, stack, expect, final)
        if expect in (KEY, KEY_OR_CLOSE):
            if char == "}" and expect == KEY_OR_CLOSE:
                return pos + 1, stack[:-1], after_value(stack[:-1])
            return self._invalid(pos, stack, expect)
        return self._value(text, pos, stack, expect, final)

    def _string(
        self, text: str, pos: int, stack: str, expect: int, final: bool
    ) -> ScanOutcome | tuple[int, str, int]:
        """Consume a string, as a key or a value."""
        in_key = expect in (KEY, KEY_OR_CLOSE)
        status, end = scan_string(text, pos + 1, text[pos], self.python)
        if status == COMPLETE:
            return end, stack, COLON if in_key else after_value(stack)
        state = NEW(ScanState, (stack, expect, text[pos], in_key))
        return self._stop(status, end, state, final)

    def _value(
        self, text: str, pos: int, stack: str, expect: int, final: bool
    ) -> ScanOutcome | tuple[int, str, int]:
        """Consume a container opening, a closing `]`, a number or a word."""
        char = text[pos]
        if char == "]" and expect == VALUE_OR_CLOSE:
            return pos + 1, stack[:-1], after_value(stack[:-1])
        if char in "{[":
            return pos + 1, stack + char, KEY_OR_CLOSE if char == "{" else VALUE_OR_CLOSE
        if char == "-" or "0" <= char <= "9":
            return self._number(text, pos, stack, expect, final)
        for word in self.words:
            if text.startswith(word, pos):
                return pos + len(word), stack, after_value(stack)
        tail = text[pos:]
        if not final and any(word.startswith(tail) for word in self.words):
            return NEW(
                ScanOutcome, (INCOMPLETE, pos, NEW(ScanState, (stack, expect, "", False)), "")
            )
        return self._invalid(pos, stack, expect)

    def _number(
        self, text: str, pos: int, stack: str, expect: int, final: bool
    ) -> ScanOutcome | tuple[int, str, int]:
        """Consume a number; one that touches the end may still grow."""
        if not final and NUMBER_PREFIX.match(text, pos).end() == len(text) and not (  # type: ignore[union-attr]
                self.ended and NUMBER.fullmatch(text, pos)):
            return NEW(
                ScanOutcome, (INCOMPLETE, pos, NEW(ScanState, (stack, expect, "", False)), "")
            )
        found = NUMBER.match(text, pos)
        if found is None:
            return self._invalid(pos, stack, expect)
        return found.end(), stack, after_value(stack)

    def _invalid(self, pos: int, stack: str, expect: int) -> ScanOutcome:
        """Report an unexpected character."""
        return NEW(
            ScanOutcome,
            (INVALID, pos, NEW(ScanState, (stack, expect, "", False)), EXPECTED[expect]),
        )


STRICT = Scanner(python=False)
PYTHON = Scanner(python=True)
STRICT_ENDED = Scanner(python=False, ended=True)
PYTHON_ENDED = Scanner(python=True, ended=True)
