"""Assemble GBNF rule text that both llama.cpp and llguidance read the same way."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analyzer.gbnf.joins import join_runs

ROOT = "root"
# Rules longer than this are wrapped: llama.cpp and llguidance both read a newline inside
# parentheses as a space, so a long body goes in one group broken between its items.
LINE_WIDTH = 100
_INDENT = "    "

# llama.cpp reads rule names as letters, digits and '-' only.
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9-]+")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9-]+")
_CAMEL_BOUNDARY = re.compile(r"([a-z])([A-Z])")

# Inside a literal: llguidance's GBNF reader rejects \u, \U and raw newlines, so control
# characters go out as \xNN and everything else printable as raw UTF-8.
_LITERAL_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Inside [...]: llguidance rejects \- and \^, so '-' goes last and '^' never first.
_CLASS_ESCAPES = {"\\": "\\\\", "]": "\\]", "[": "\\[", '"': '\\"', "\n": "\\n", "\r": "\\r",
                  "\t": "\\t"}


def rule_name(hint: str) -> str:
    """Turn any text into a name llama.cpp accepts (letters, digits and '-'), lower case.

    llguidance renames rules to snake_case (fooBar -> foo_bar, foo-bar -> foo_bar); names
    that are already lower case with dashes map one to one, so they cannot collide there.
    """
    name = _NAME_UNSAFE.sub("-", _CAMEL_BOUNDARY.sub(r"\1-\2", hint)).strip("-").lower()
    return re.sub("-{2,}", "-", name) or "rule"


def _escape_char(char: str, table: dict[str, str]) -> str:
    if char in table:
        return table[char]
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"\\x{ord(char):02x}"
    return char


def literal(text: str) -> str:
    """Quote text as a GBNF string literal."""
    return '"' + "".join(_escape_char(c, _LITERAL_ESCAPES) for c in text) + '"'


def chars(text: str) -> str:
    """Spell text as a sequence of one-character literals (same language as literal(text)).

    Markers and names are written this way; when the grammar is printed, each run of
    adjacent literals becomes one whole literal unless llguidance would read it differently
    there (beside free text, see `analyzer.gbnf.joins`).
    """
    return " ".join(literal(c) for c in text)


def char_class(chars: Iterable[str], *, negate: bool = False) -> str:
    """Build a [...] class of single characters (or [^...] when negated)."""
    ordered = sorted(set(chars))
    if not ordered:
        raise ValueError("a character class needs at least one character")
    if len(ordered) == 1 and not negate:
        return literal(ordered[0])
    body = "".join(_escape_char(c, _CLASS_ESCAPES) for c in ordered if c not in "-^")
    if "^" in ordered:
        if not body and not negate and "-" not in ordered:
            return literal("^")
        # '^' is literal anywhere but first; a leading '-' is literal too.
        body = body + "^" if body or negate else "-^"
    if "-" in ordered and not body.endswith("-^"):
        body += "-"
    return "[" + ("^" if negate else "") + body + "]"


def _closing(expr: str, start: int) -> int:
    """Index just past the primary expression (literal, class or group) opening at start."""
    opener = expr[start]
    depth, i = 0, start
    while i < len(expr):
        c = expr[i]
        if c == "\\":
            i += 2
            continue
        if opener == '"' and c == '"' and i > start:
            return i + 1
        if opener == "[" and c == "]":
            return i + 1
        if opener == "(":
            if c in '"[':
                i = _closing(expr, i)
                continue
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                return i + 1
        i += 1
    return len(expr) + 1


def is_atomic(expr: str) -> bool:
    """Tell whether expr is one primary that a postfix operator can follow directly."""
    if _PLAIN_NAME.fullmatch(expr):
        return True
    return bool(expr) and expr[0] in '"[(' and _closing(expr, 0) == len(expr)


def group(expr: str) -> str:
    """Wrap expr in parentheses unless it is already one primary."""
    return expr if is_atomic(expr) else f"({expr})"


def seq(*parts: str) -> str:
    """Concatenate expressions; empty parts are dropped."""
    kept = [p for p in parts if p]
    return " ".join(group(p) if " | " in p and not is_atomic(p) else p for p in kept)


def alt(*parts: str) -> str:
    """Offer alternatives, in parentheses so the result embeds anywhere."""
    unique = list(dict.fromkeys(parts))
    if len(unique) == 1:
        return unique[0] or "()"
    return "(" + " | ".join(unique) + ")"


def opt(expr: str) -> str:
    """Make expr optional."""
    return group(expr) + "?" if expr else ""


def star(expr: str) -> str:
    """Repeat expr zero or more times (expr must not match empty text)."""
    return group(expr) + "*"


def repeat(expr: str, low: int, high: int | None) -> str:
    """Repeat expr between low and high times (high None: no upper bound)."""
    if (low, high) == (1, 1):
        return expr
    if high == 0:
        return ""
    if high is None:
        return group(expr) + ("*" if low == 0 else "+" if low == 1 else f"{{{low},}}")
    if (low, high) == (0, 1):
        return opt(expr)
    return group(expr) + (f"{{{low}}}" if low == high else f"{{{low},{high}}}")


class GrammarBuilder:
    """Collect named rules, reuse identical bodies, and print the grammar root first."""

    def __init__(self, *, join: bool = True) -> None:
        self.join = join  # False: print markers spelled one character per literal throughout
        self._rules: dict[str, str] = {}
        self._names_by_body: dict[str, str] = {}
        self._reserved: set[str] = {ROOT}
        self.memo: dict[object, str] = {}  # callers cache rules built from the same inputs
        # Texts whose runs of literals stay spelled one character each (see joins.py).
        self.spelled: set[str] = set()
        self.spell_everything = False  # free text that excludes nothing: no run is safe

    def _unique(self, hint: str) -> str:
        base = rule_name(hint)
        name, n = base, 1
        while name in self._rules or name in self._reserved:
            n += 1
            name = f"{base}-{n}"
        return name

    def reserve(self, hint: str) -> str:
        """Claim a fresh name now and define it later (for recursive rules)."""
        name = self._unique(hint)
        self._reserved.add(name)
        return name

    def spell(self, *texts: str) -> None:
        """Keep every run of literals holding one of texts one character per literal.

        For markers beside free text or a class that may read them (see joins.py).
        """
        self.spelled.update(t.strip() for t in texts if t.strip())

    def define(self, name: str, body: str) -> None:
        """Give a reserved name (or the root) its body."""
        self._rules[name] = body

    def add(self, hint: str, body: str) -> str:
        """Add a rule under a name derived from hint; identical bodies share one rule."""
        if body in self._names_by_body:
            return self._names_by_body[body]
        name = self._unique(hint)
        self._rules[name] = body
        self._names_by_body[body] = name
        return name

    def render(self) -> str:
        """Print every rule, root first, its runs of literals joined where that is safe.

        A rule longer than LINE_WIDTH is wrapped.
        """
        rules = self._rules if self.spell_everything or not self.join else \
            join_runs(self._rules, self.spelled, LINE_WIDTH - len(_INDENT))
        ordered = sorted(rules.items(), key=lambda item: item[0] != ROOT)
        return "".join(wrapped_rule(name, body) + "\n" for name, body in ordered)


def wrapped_rule(name: str, body: str, width: int = LINE_WIDTH) -> str:
    """`name ::= body` on one line, or its body grouped and broken between items."""
    line = f"{name} ::= {body}"
    if len(line) <= width:
        return line
    lines, current = [f"{name} ::= ("], _INDENT
    for item in _items(body):
        if current.strip() and len(current) + 1 + len(item) > width:
            lines.append(current)
            current = _INDENT
        current += (" " if current.strip() else "") + item
    lines.append(current)
    return "\n".join(lines) + "\n)"


def _items(body: str) -> list[str]:
    """Split a body at the spaces outside literals and classes (where a newline may go)."""
    items, start, i, quoted = [], 0, 0, ""
    while i < len(body):
        c = body[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == quoted:
                quoted = ""
        elif c == '"' or c == "[":
            quoted = '"' if c == '"' else "]"
        elif c == " ":
            items.append(body[start:i])
            start = i + 1
        i += 1
    items.append(body[start:])
    return [item for item in items if item]
