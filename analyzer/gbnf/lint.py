"""Check GBNF text against llama.cpp's grammar reader, which is stricter than llguidance's.

The reader here follows llama.cpp's rules: rule names of letters, digits and '-', one rule
per line unless the line ends inside parentheses or after '|', the escapes \\x \\u \\U \\t
\\r \\n \\\\ \\" \\[ \\] \\-, repetition counts below 2000, every referenced rule defined, a
`root` rule, and no left recursion. Left recursion is found with full nullability (llama.cpp
only sees alternatives that are literally empty), so anything flagged here is truly left
recursive and anything llama.cpp flags is flagged here too.

Problems of kind "portability" are accepted by llama.cpp but read differently by
llguidance's GBNF reader (\\u escapes, \\-, raw newlines in literals, '.', token syntax).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_REPETITION = 2000
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_LOOSE_WORD = _WORD | frozenset("_")
_SIMPLE_ESCAPES = frozenset('tnr\\"[]-')
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


@dataclass(frozen=True)
class GbnfProblem:
    """One way a grammar breaks llama.cpp's reader (or llguidance's, for portability)."""

    line: int  # 1-based
    column: int  # 1-based
    message: str
    kind: str = "error"  # "error": llama.cpp refuses it; "portability": llguidance differs

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


# -- expression tree, just enough for nullability and left recursion -----------------------


@dataclass
class _Expr:
    kind: str  # "term", "ref", "seq", "alt", "repeat"
    name: str = ""  # ref
    nullable_term: bool = False  # term: matches empty text ("")
    items: list[_Expr] = field(default_factory=list)  # seq, alt, repeat (one item)
    low: int = 0
    high: int | None = None
    where: tuple[int, int] = (0, 0)


@dataclass
class _Rule:
    name: str
    body: _Expr
    where: tuple[int, int]


class _SyntaxProblem(Exception):
    pass


class _Reader:
    """Recursive-descent reader that mirrors llama.cpp's grammar parser."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.problems: list[GbnfProblem] = []
        self.rules: list[_Rule] = []

    # -- positions and problems ------------------------------------------------------------

    def where(self, pos: int | None = None) -> tuple[int, int]:
        at = self.pos if pos is None else pos
        line_start = self.text.rfind("\n", 0, at) + 1
        return self.text.count("\n", 0, at) + 1, at - line_start + 1

    def report(self, message: str, *, kind: str = "error", pos: int | None = None) -> None:
        line, column = self.where(pos)
        self.problems.append(GbnfProblem(line, column, message, kind))

    def fail(self, expected: str) -> _SyntaxProblem:
        found = repr(self.text[self.pos : self.pos + 15]) if self.pos < len(self.text) else "end"
        self.report(f"expected {expected}, found {found}")
        return _SyntaxProblem()

    def peek(self, offset: int = 0) -> str:
        at = self.pos + offset
        return self.text[at] if at < len(self.text) else ""

    # -- lexical pieces --------------------------------------------------------------------

    def skip_space(self, newline_ok: bool) -> None:
        while self.peek() and (self.peek() in " \t#" or (newline_ok and self.peek() in "\r\n")):
            if self.peek() == "#":
                while self.peek() and self.peek() not in "\r\n":
                    self.pos += 1
            else:
                self.pos += 1

    def name(self) -> str:
        start = self.pos
        while self.peek() in _LOOSE_WORD and self.peek():
            self.pos += 1
        name = self.text[start : self.pos]
        if not name:
            raise self.fail("a rule name")
        bad = sorted({c for c in name if c not in _WORD})
        if bad:
            shown = " ".join(f"`{c}`" for c in bad)
            self.report(f"rule name `{name}` contains {shown}: llama.cpp allows only letters, "
                        "digits and '-'", pos=start)
        return name

    def integer(self) -> int:
        start = self.pos
        while self.peek().isdigit() and self.peek().isascii():
            self.pos += 1
        if start == self.pos:
            raise self.fail("an integer")
        return int(self.text[start : self.pos])

    def char(self, closing: str) -> None:
        """Read one (possibly escaped) character of a literal or class."""
        start = self.pos
        if self.peek() == "\\":
            self.escape(start)
            return
        if self.peek() == "\n" and closing == '"':
            self.report("raw newline inside a literal: llguidance's reader stops there; "
                        "write \\n", kind="portability")
        self.pos += 1

    def escape(self, start: int) -> None:
        code = self.peek(1)
        self.pos += 2
        if code in _HEX_ESCAPES:
            wanted = _HEX_ESCAPES[code]
            digits = self.text[self.pos : self.pos + wanted]
            valid = len(digits) - len(digits.lstrip("0123456789abcdefABCDEF"))
            if valid != wanted:
                self.report(f"escape \\{code} needs {wanted} hex digits, found {digits!r}",
                            pos=start)
            self.pos += valid
            if code in "uU":
                self.report(f"llguidance misreads \\{code} escapes; write the character itself",
                            kind="portability", pos=start)
        elif code == "-":
            self.report("llguidance rejects the escape \\-; put '-' last in the class",
                        kind="portability", pos=start)
        elif code not in _SIMPLE_ESCAPES:
            self.report(f"unknown escape \\{code}: llama.cpp knows \\x \\u \\U \\t \\r \\n "
                        "\\\\ \\\" \\[ \\] \\-", pos=start)

    def literal(self) -> _Expr:
        start = self.pos
        self.pos += 1
        while self.peek() != '"':
            if not self.peek():
                self.pos = start
                raise self.fail("a closing '\"' for this literal")
            self.char('"')
        self.pos += 1
        return _Expr("term", nullable_term=self.pos - start == 2, where=self.where(start))

    def char_class(self) -> _Expr:
        start = self.pos
        self.pos += 1 + (self.peek(1) == "^")
        while self.peek() != "]":
            if not self.peek():
                self.pos = start
                raise self.fail("a closing ']' for this character class")
            self.char("]")
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                self.char("]")
        self.pos += 1
        return _Expr("term", where=self.where(start))

    def token(self) -> _Expr:
        start = self.pos
        self.pos += self.peek() == "!"
        end = self.text.find(">", self.pos)
        if self.peek() != "<" or end < 0:
            raise self.fail("a token such as <[123]>")
        self.pos = end + 1
        self.report("token references need the model's vocabulary; keep grammars to text",
                    kind="portability", pos=start)
        return _Expr("term", where=self.where(start))

    # -- structure -------------------------------------------------------------------------

    def repetition(self, item: _Expr, nested: bool) -> _Expr:
        op = self.peek()
        self.pos += 1
        self.skip_space(nested)
        low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(op, (0, None))
        if op == "{":
            low, high = self.braces(nested)
        return _Expr("repeat", items=[item], low=low, high=high, where=item.where)

    def braces(self, nested: bool) -> tuple[int, int | None]:
        start = self.pos - 1
        low = self.integer()
        self.skip_space(nested)
        high: int | None = low
        if self.peek() == ",":
            self.pos += 1
            self.skip_space(nested)
            high = self.integer() if self.peek().isdigit() else None
            self.skip_space(nested)
        if self.peek() != "}":
            raise self.fail("'}' closing the repetition count")
        self.pos += 1
        self.skip_space(nested)
        if low > MAX_REPETITION:
            self.report(f"repetition minimum {low} is above llama.cpp's limit of "
                        f"{MAX_REPETITION}", pos=start)
        return low, (None if high is not None and high > MAX_REPETITION else high)

    def primary(self, nested: bool) -> _Expr | None:
        c = self.peek()
        start = self.pos
        if not c:
            return None
        if c == '"':
            item = self.literal()
        elif c == "[":
            item = self.char_class()
        elif c in "<!":
            item = self.token()
        elif c == "(":
            self.pos += 1
            self.skip_space(True)
            item = self.alternates(nested=True)
            if self.peek() != ")":
                raise self.fail("')' closing the group")
            self.pos += 1
        elif c == ".":
            self.pos += 1
            self.report("llguidance's '.' does not match newlines; use a negated class",
                        kind="portability")
            item = _Expr("term")
        elif c in _LOOSE_WORD:
            item = _Expr("ref", name=self.name(), where=self.where(start))
        else:
            return None
        item.where = self.where(start)
        self.skip_space(nested)
        return item

    def sequence(self, nested: bool) -> _Expr:
        items: list[_Expr] = []
        while True:
            if self.peek() and self.peek() in "*+?{":
                if not items:
                    raise self.fail("an item before the repetition operator")
                items[-1] = self.repetition(items[-1], nested)
                self.check_repetition_size(items[-1])
                continue
            item = self.primary(nested)
            if item is None:
                return _Expr("seq", items=items)
            items.append(item)

    def check_repetition_size(self, rep: _Expr) -> None:
        if rep.low > MAX_REPETITION:
            return  # already reported by braces()
        weight = _weight(rep.items[0]) * _total(rep)
        if weight >= MAX_REPETITION:
            line, column = rep.where
            self.problems.append(GbnfProblem(
                line, column, f"this repetition copies about {weight} rules; llama.cpp "
                f"refuses {MAX_REPETITION} or more"))

    def alternates(self, nested: bool) -> _Expr:
        options = [self.sequence(nested)]
        while self.peek() == "|":
            self.pos += 1
            self.skip_space(True)
            options.append(self.sequence(nested))
        return _Expr("alt", items=options)

    def rule(self) -> None:
        start = self.pos
        name = self.name()
        self.skip_space(False)
        if self.text[self.pos : self.pos + 3] != "::=":
            raise self.fail(f"'::=' after the rule name `{name}`")
        self.pos += 3
        self.skip_space(True)
        body = self.alternates(nested=False)
        self.rules.append(_Rule(name, body, self.where(start)))
        if self.peek() not in ("\r", "\n", ""):
            raise self.fail("the end of the line after this rule (continue a rule only "
                            "after '|' or inside parentheses)")
        self.skip_space(True)

    def read(self) -> None:
        self.skip_space(True)
        try:
            while self.pos < len(self.text):
                self.rule()
        except _SyntaxProblem:
            pass


def _total(rep: _Expr) -> int:
    """How many copies llama.cpp counts for a repetition."""
    if rep.high:
        return rep.high
    return max(rep.low, 1)


def _new_ids(expr: _Expr) -> int:
    """How many helper rules llama.cpp creates while reading expr."""
    own = 0
    if expr.kind == "alt":
        own = 1
    elif expr.kind == "repeat":
        own = expr.high - expr.low if expr.high is not None else 1
    return own + sum(_new_ids(item) for item in expr.items)


def _weight(expr: _Expr) -> int:
    """llama.cpp's count of rules behind one item, which repetition multiplies."""
    if expr.kind == "repeat":
        return _weight(expr.items[0]) * _total(expr)
    return max(1, _new_ids(expr))


# -- grammar-wide checks --------------------------------------------------------------------


def _nullable(expr: _Expr, known: dict[str, bool]) -> bool:
    if expr.kind == "term":
        return expr.nullable_term
    if expr.kind == "ref":
        return known.get(expr.name, False)
    if expr.kind == "seq":
        return all(_nullable(item, known) for item in expr.items)
    if expr.kind == "alt":
        return any(_nullable(item, known) for item in expr.items)
    return expr.low == 0 or _nullable(expr.items[0], known)


def _nullable_rules(rules: dict[str, _Expr]) -> dict[str, bool]:
    known = {name: False for name in rules}
    changed = True
    while changed:
        changed = False
        for name, body in rules.items():
            if not known[name] and _nullable(body, known):
                known[name] = changed = True
    return known


def _left_refs(expr: _Expr, nullable: dict[str, bool]) -> set[str]:
    """Rules that can be entered before any character is matched."""
    if expr.kind == "ref":
        return {expr.name}
    if expr.kind == "alt":
        return set().union(*(_left_refs(item, nullable) for item in expr.items))
    if expr.kind == "repeat":
        return _left_refs(expr.items[0], nullable)
    found: set[str] = set()
    for item in expr.items if expr.kind == "seq" else []:
        found |= _left_refs(item, nullable)
        if not _nullable(item, nullable):
            break
    return found


def _empty_loops(expr: _Expr, nullable: dict[str, bool]) -> list[_Expr]:
    """Unbounded repetitions of something that can match empty text."""
    loops = [loop for item in expr.items for loop in _empty_loops(item, nullable)]
    if expr.kind == "repeat" and expr.high is None and _nullable(expr.items[0], nullable):
        loops.append(expr)
    return loops


def _find_cycle(graph: dict[str, set[str]], start: str) -> list[str]:
    """Return a path start -> ... -> start through graph, or [] if there is none."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return []


def _references(expr: _Expr) -> list[_Expr]:
    if expr.kind == "ref":
        return [expr]
    return [ref for item in expr.items for ref in _references(item)]


def _check_rules(rules: list[_Rule]) -> list[GbnfProblem]:
    problems: list[GbnfProblem] = []
    bodies: dict[str, _Expr] = {}
    for rule in rules:
        if rule.name in bodies:
            problems.append(GbnfProblem(*rule.where, f"rule `{rule.name}` is defined twice; "
                                        "llama.cpp keeps only the last definition"))
        bodies[rule.name] = rule.body
    if rules and "root" not in bodies:
        problems.append(GbnfProblem(1, 1, "no `root` rule: llama.cpp starts from `root`"))
    for rule in rules:
        for ref in _references(rule.body):
            if ref.name not in bodies:
                problems.append(GbnfProblem(*ref.where, f"rule `{ref.name}` is used in "
                                            f"`{rule.name}` but never defined"))
    problems += _check_left_recursion(rules, bodies)
    return problems


def _check_left_recursion(rules: list[_Rule], bodies: dict[str, _Expr]) -> list[GbnfProblem]:
    nullable = _nullable_rules(bodies)
    graph = {name: _left_refs(body, nullable) for name, body in bodies.items()}
    problems: list[GbnfProblem] = []
    reported: set[str] = set()
    for rule in rules:
        for loop in _empty_loops(rule.body, nullable):
            problems.append(GbnfProblem(*loop.where, f"in `{rule.name}`, an unbounded "
                                        "repetition of something that can match empty text "
                                        "(llama.cpp makes it a left-recursive rule)"))
        cycle = [] if rule.name in reported else _find_cycle(graph, rule.name)
        if cycle:
            reported.update(cycle)
            problems.append(GbnfProblem(*rule.where, f"rule `{rule.name}` is left-recursive: "
                                        + " -> ".join(cycle)))
    return problems


def check_gbnf_strict(text: str) -> list[GbnfProblem]:
    """List every way text breaks llama.cpp's GBNF rules (empty list: the grammar is fine)."""
    reader = _Reader(text)
    reader.read()
    syntax_failed = reader.pos < len(reader.text)
    problems = reader.problems + ([] if syntax_failed else _check_rules(reader.rules))
    if not reader.rules and not syntax_failed:
        problems.append(GbnfProblem(1, 1, "the grammar has no rules"))
    return sorted(problems, key=lambda p: (p.line, p.column))
