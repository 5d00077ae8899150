"""Rules for free text that never contains given markers (GBNF has no lookahead).

The text is read by the automaton that searches for the markers (Aho-Corasick): each state
is the longest marker prefix the text currently ends with, and every state becomes one
right-recursive rule. Texts that complete a marker have no path, so they are rejected, and
the text may stop anywhere, including inside a marker prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.gbnf.builder import GrammarBuilder, alt, char_class, opt, seq, star

# Every character but NUL: llguidance's '.' skips newlines, so no '.' anywhere.
ANY_CHAR = "[^\\x00]"


def _next_state(state: str, char: str, prefixes: set[str]) -> str:
    text = state + char
    for start in range(len(text) + 1):
        if text[start:] in prefixes:
            return text[start:]
    return ""


def _completes(state: str, char: str, words: tuple[str, ...]) -> bool:
    return any((state + char).endswith(word) for word in words)


def _transitions(words: tuple[str, ...]) -> dict[str, dict[str, str | None]]:
    """Map each reachable state to {char: next state}, None where a marker completes."""
    prefixes = {word[:i] for word in words for i in range(len(word))}
    alphabet = sorted({c for word in words for c in word})
    table: dict[str, dict[str, str | None]] = {}
    pending = [""]
    while pending:
        state = pending.pop()
        if state in table:
            continue
        row: dict[str, str | None] = {
            char: None if _completes(state, char, words) else _next_state(state, char, prefixes)
            for char in alphabet
        }
        table[state] = row
        pending.extend(s for s in row.values() if s is not None and s not in table)
    return table


def _state_body(row: dict[str, str | None], names: dict[str, str], *, is_start: bool) -> str:
    leaving = {c for c, target in row.items() if target != ""}
    by_target: dict[str, set[str]] = {}
    for char, target in row.items():
        if target:
            by_target.setdefault(target, set()).add(char)
    moves = [seq(char_class(chars), names[t]) for t, chars in sorted(by_target.items())]
    stay = char_class(leaving, negate=True)
    if is_start:
        return seq(star(stay), opt(alt(*moves)) if moves else "")
    return opt(alt(seq(stay, names[""]), *moves))


def text_excluding(builder: GrammarBuilder, markers: Sequence[str], hint: str) -> str:
    """Add rules matching any text that contains none of the markers; return its rule."""
    words = tuple(sorted({m for m in markers if m}))
    if not words:
        builder.spell_everything = True  # whatever comes beside it may be read as text
        return builder.add("any-text", star(ANY_CHAR))
    builder.spell(*words)  # what closes the text is read beside it
    key = ("text-excluding", words)
    if key not in builder.memo:
        table = _transitions(words)
        states = sorted(table, key=len)
        names = {state: builder.reserve(f"{hint}-{i}") for i, state in enumerate(states)}
        for state in states:
            builder.define(names[state], _state_body(table[state], names, is_start=state == ""))
        builder.memo[key] = names[""]
    return builder.memo[key]
