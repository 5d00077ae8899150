"""Write runs of adjacent literals as one string literal where llguidance reads them alike.

Rules spell markers one character per literal (`builder.chars`) and the builder joins each
run of adjacent literals when it prints the grammar (`join_runs`). llama.cpp reads both
spellings the same; llguidance does not always: a literal is one lexeme, and its lexer is
greedy and steps back over one byte only. Where another parse reads the first two
characters of a whole literal one at a time, the lexer either reads on with the literal
and fails (`"</think>"` whole rejects `</p></think>`: the reasoning text's `<` is accepted,
the literal reads `</` and then fails on `p`), or takes the literal whole and drops the
other parse (`"analysis"` whole after `<|channel|>` drops GPT-OSS's spelled note header
`<|channel|>analysis<|message|>`).

So a run stays spelled when it:
- holds a text the builder was told to keep spelled: what free text excludes (what closes
  or follows it) and what callers register with `builder.spell` (markers beside free text,
  keys beside a key class);
- starts with whitespace (a repeated whitespace class reads it too);
- starts another run, or another run starts it;
- starts with two characters that a spelled text holds anywhere (a parse reading that text
  may be at that point).
A grammar whose free text excludes nothing, or whose reasoning is optional (its text may
hold any call marker), keeps every run spelled (`builder.spell_everything`). The decision
is by text, so one text is spelled the same way everywhere in a grammar; the pass reads
each rule holding two literals side by side once, with one regular expression.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

_LITERAL = r'"(?:\\.|[^"\\])*"'
# A class (skipped whole: it may hold quotes); literals one space apart, none repeated; or
# a literal alone (a repeated one too), so the scan never starts inside a literal.
_PIECES = re.compile(r"(\[(?:\\.|[^\]\\])*\])|((?:" + _LITERAL + r"(?![?*+{]) )*" + _LITERAL +
                     r"(?![?*+{]))|" + _LITERAL)
_ONE = re.compile(_LITERAL)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|.)")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t"}
# A whole run goes wrong where another parse reads its first two characters one at a time:
# the lexer accepts that parse's first character, reads on with the run, and when the run
# fails it steps back over the failing byte only; or it takes the run whole and drops the
# parse that needed the shorter lexemes.
SHARED_PREFIX = 2


def _unescape(body: str) -> str:
    def one(found: re.Match[str]) -> str:
        code = found.group(1)
        return chr(int(code[1:], 16)) if code[0] == "x" and len(code) == 3 else \
            _SIMPLE.get(code, code)
    return _ESCAPE.sub(one, body)


def _runs(rules: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Per rule holding any, its runs of two or more literals: source text -> text read."""
    found: dict[str, dict[str, str]] = {}
    for name, body in rules.items():
        if '" "' not in body:  # no two literals side by side (most rules): skip the scan
            continue
        for _, run in _PIECES.findall(body):
            if '" "' in run:
                tokens = _ONE.findall(run)
                if len(tokens) > 1:
                    raw = "".join(t[1:-1] for t in tokens)  # escapes never span tokens
                    found.setdefault(name, {})[run] = _unescape(raw) if "\\" in raw else raw
    return found


def literal_runs(grammar: str) -> list[str]:
    """The texts of the runs of two or more adjacent literals in a printed grammar."""
    lines = [line for line in grammar.splitlines() if not line.startswith("#")]
    # Wrapped rules break between items: a newline there reads as a space.
    return list(_runs({"": re.sub(r"\n +", " ", "\n".join(lines))}).get("", {}).values())


def spelled_runs(texts: Collection[str], spell: Collection[str]) -> set[str]:
    """The run texts that must stay one character per literal (see the module docstring)."""
    spelled = {t for t in texts if not t or t[0].isspace() or any(w in t for w in spell if w)}
    chain: list[str] = []  # in sorted order, the runs that start the current one
    for text in sorted(texts):
        while chain and not text.startswith(chain[-1]):
            chain.pop()
        if chain:
            spelled |= {text, *chain}
        chain.append(text)
    # A parse reading a spelled text may be anywhere in it when a whole run starts: the
    # run is wrong if that parse can read its first characters too (see SHARED_PREFIX).
    pieces: set[str] = set()
    fresh = spelled | {w for w in spell if w}
    while fresh:
        pieces |= {t[i:i + SHARED_PREFIX] for t in fresh
                   for i in range(len(t) - SHARED_PREFIX + 1)}
        fresh = {t for t in texts if t not in spelled and t[:SHARED_PREFIX] in pieces}
        spelled |= fresh
    return spelled


def join_runs(rules: Mapping[str, str], spell: Collection[str], longest: int) -> dict[str, str]:
    """Return the rules with every run of literals that llguidance reads alike joined.

    A run longer than `longest` characters once joined stays spelled: a literal cannot be
    broken across lines, and cutting it in two is not always safe.
    """
    runs = _runs(rules)
    if not runs:
        return dict(rules)
    keep = spelled_runs({t for found in runs.values() for t in found.values()}, spell)
    joined = {source: '"' + "".join(t[1:-1] for t in _ONE.findall(source)) + '"'
              for found in runs.values() for source, text in found.items() if text not in keep}
    joined = {source: whole for source, whole in joined.items() if len(whole) <= longest}

    def replace(match: re.Match[str]) -> str:
        return joined.get(match.group(2) or "", match.group(0))

    return {name: _PIECES.sub(replace, body) if name in runs and joined else body
            for name, body in rules.items()}
