"""A resumable scanner that tells whether text is a JSON value, a prefix of one, or neither.

Used where the C decoder cannot answer: partial input (is this an unfinished value?), the
python-dict flavour (single quotes, True/False/None), and streams, which resume the scan
where the previous chunk stopped instead of rescanning the value. Tokens are matched with
compiled regexes, so the Python loop runs once per token, not once per character.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

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
# (Possessive: nothing after a body can give back what it read, and `re` then keeps no
# backtracking points: ~10% fewer instructions on a stream's escaped chunks.)
STRICT_BODY = re.compile(
    r'[^"\\\x00-\x1f]*+(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*+)*+'
)
PYTHON_BODY = {
    "'": re.compile(r"[^'\\]*+(?:\\[\s\S][^'\\]*+)*+"),
    '"': re.compile(r'[^"\\]*+(?:\\[\s\S][^"\\]*+)*+'),
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


# Flat runs. Inside an object or array, a stream's chunk is mostly tokens that open and close
# nothing: strings, numbers, words, commas, colons, whitespace. One regex per container kind
# and state reads such a run as the token loop would (the same tokens, the same stops), and
# says by its last group where it stopped: at a position of the member cycle (the loop goes on
# from there: a bracket, or anything the run does not read), inside a string at the end of
# the text, or before a number or word the end of the text cuts (the scan resumes before it).
# Only unfinished strict input takes them (a final or ended scan decides the end otherwise).
SPACE = r"[ \t\r\n]*"
# A string without escapes (one with any goes through the loop, which checks them)
PLAIN_BODY = r'[^"\\\x00-\x1f]*+'
STRING_TOKEN = '"' + PLAIN_BODY + '"'
# How many tokens' steps a run reads at most before the loop takes one and runs again (a
# 16-byte chunk holds a member or two)
FLAT_DEPTH = 8
# A number is read where it cannot grow: the next character ends it (`5` at the text's end
# may be `50`); atomic, as the loop's `match` takes the first (greedy) reading.
SCALAR = ("(?:" + STRING_TOKEN + "|(?>" + NUMBER.pattern + r")(?=[ \t\r\n,\]}])"
          + "|true|false|null)")
# What the loop stops before at the text's end, resuming there: a number that may grow, a
# word begun (the loop reads `true` whole where it is all there).
CUT_TOKEN = (r"(?=(?=[-0-9])(?>" + NUMBER_PREFIX.pattern + r")\Z"
             + r"|(?:t(?:ru?)?|f(?:a(?:ls?)?)?|n(?:ul?)?)\Z)")
# The states a flat run stops in are kept by stack (a stream stops in the same few again and
# again; a named tuple costs several times a dict lookup to build), at most this many each.
FLAT_STATES = 64


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


CLOSED: dict[ScanState, ScanState] = {}  # closed()'s answers


def closed(state: ScanState) -> ScanState | None:
    """Return the state a scan is in right after the open string of `state` closes, inside a
    container (None at the top level, where the value is then complete)."""
    after = CLOSED.get(state)
    if after is None and state.stack:
        if len(CLOSED) >= FLAT_STATES:
            CLOSED.clear()
        expect = COLON if state.in_key else COMMA_OR_CLOSE
        after = CLOSED[state] = NEW(ScanState, (state.stack, expect, "", False))
    return after


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
        # Flat runs read by one regex (strict, unfinished input: final=False scans; the
        # module's FLAT once it is defined)
        self.flat: dict[str, list[Any]] | None = None

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
        flat = None if final else self.flat
        while True:
            if flat is not None and stack:
                pattern, ends = flat[stack[-1]][expect]
                found = pattern.match(text, pos)
                pos = found.end()
                expect, stops, expected, states, quote = ends[found.lastindex]
                if stops or pos >= size:  # a string or cut token at the end, or the end
                    state = states.get(stack)
                    if state is None:
                        state = flat_state(states, stack, expect, quote)
                    return NEW(ScanOutcome, (INCOMPLETE, pos, state, expected))
                # else one token the run does not read (a bracket, an escape to check, an
                # error), then the next run
            elif pos < size and text[pos] in SPACE_CHARS:
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


def flat_state(states: dict[str, ScanState], stack: str, expect: int, quote: str) -> ScanState:
    """Build and keep the state a flat run stops in."""
    if len(states) >= FLAT_STATES:
        states.clear()
    state = states[stack] = NEW(ScanState, (stack, expect, quote, bool(quote) and expect in KEYS))
    return state


def flat_run(cycle: list[tuple[int, str]], start: int) -> tuple[re.Pattern[str], list[Any]]:
    """Return the flat-run regex of a container whose member cycle is `cycle` ((expect,
    the tokens that leave that position) in order), read from the position whose expect is
    `start` (a first member's KEY_OR_CLOSE or VALUE_OR_CLOSE stands at KEY's or VALUE's
    place), and what each group says: (expect, whether the scan stops there even before the
    text's end, the outcome's expected text, its states by stack, the open quote)."""
    size = len(cycle)
    first = next(index for index, (expect, _) in enumerate(cycle)
                 if expect == start or (expect, start) in ((KEY, KEY_OR_CLOSE),
                                                            (VALUE, VALUE_OR_CLOSE)))
    ends: list[Any] = [None]  # group 0 is the whole match

    def stops(index: int, expect: int, depth: int) -> str:
        # A position: its own group, then on along the cycle (a chain, not a repetition: a
        # repeated group costs `re` more than the loop's tokens), a string to the end of the
        # text, or a token the end cuts. Each choice is an alternation with an empty last
        # branch (cheaper in `re` than an optional group).
        ends.append((expect, False, EXPECTED[expect], {}, ""))
        tails = []
        if depth:
            after = (index + 1) % size
            tails.append(cycle[index][1] + stops(after, cycle[after][0], depth - 1))
        if expect in (KEY, KEY_OR_CLOSE, VALUE, VALUE_OR_CLOSE):
            ends.append((expect, True, "a valid string character or escape", {}, '"'))
            tails.append('"' + PLAIN_BODY + r"()\Z")
        if expect in (VALUE, VALUE_OR_CLOSE):
            ends.append((expect, True, "", {}, ""))  # _value's and _number's cut: no text
            tails.append("()" + CUT_TOKEN)
        return "()" + ("(?:" + "|".join(tails) + "|)" if tails else "")

    return re.compile(SPACE + stops(first, start, FLAT_DEPTH)), ends


OBJECT_CYCLE = [(KEY, STRING_TOKEN + SPACE), (COLON, ":" + SPACE), (VALUE, SCALAR + SPACE),
                (COMMA_OR_CLOSE, "," + SPACE)]
ARRAY_CYCLE = [(VALUE, SCALAR + SPACE), (COMMA_OR_CLOSE, "," + SPACE)]
# By container and expect: (regex, ends), or None where that expect cannot stand there.
FLAT: dict[str, list[Any]] = {
    "{": [flat_run(OBJECT_CYCLE, expect) if expect in (KEY, KEY_OR_CLOSE, COLON, VALUE,
                                                        COMMA_OR_CLOSE) else None
          for expect in range(DONE)],
    "[": [flat_run(ARRAY_CYCLE, expect) if expect in (VALUE, VALUE_OR_CLOSE, COMMA_OR_CLOSE)
          else None for expect in range(DONE)],
}


STRICT = Scanner(python=False)
STRICT.flat = FLAT
PYTHON = Scanner(python=True)
STRICT_ENDED = Scanner(python=False, ended=True)
PYTHON_ENDED = Scanner(python=True, ended=True)
