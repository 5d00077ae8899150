"""Parse errors with a trace: which rule failed where, what was expected, what was found."""

from __future__ import annotations

from analyzer.errors import AnalyzerError

CONTEXT_WIDTH = 60


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """Return the 1-based line and column of offset in text."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def caret_context(text: str, offset: int) -> str:
    """Show the line around offset with a caret under it (long lines are windowed)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end == -1 else line_end
    left = max(line_start, offset - CONTEXT_WIDTH // 2)
    right = min(line_end, left + CONTEXT_WIDTH)
    shown = text[left:right].replace("\t", " ")
    prefix = "..." if left > line_start else ""
    suffix = "..." if right < line_end else ""
    return f"{prefix}{shown}{suffix}\n{' ' * (len(prefix) + offset - left)}^"


def found_size(expected: tuple[str, ...]) -> int:
    """Return how much text a trace quotes as found: about as long as what was expected."""
    return max([10] + [len(item) - 2 for item in expected if item.startswith("`")])


def found_at(text: str, offset: int, expected: tuple[str, ...]) -> str:
    """Describe what stands at offset, about as long as what was expected."""
    if offset >= len(text):
        return "end of input"
    snippet = text[offset : offset + found_size(expected)].split("\n")[0] or text[offset]
    return "`" + snippet.replace("\n", "\\n") + "`"


class PegParseError(AnalyzerError):
    """The input does not match the parser's grammar."""

    def __init__(
        self,
        *,
        text: str,
        offset: int,
        expected: tuple[str, ...],
        rule: str = "",
        base_offset: int = 0,
        base_line: int = 1,
        base_column: int = 1,
    ) -> None:
        # text may be the tail of a longer input (a stream keeps only what is not final yet);
        # base_* say where that tail starts, so the position is reported in the whole input.
        self.offset = base_offset + offset
        line, column = line_and_column(text, offset)
        self.line = base_line + line - 1
        self.column = base_column + column - 1 if line == 1 else column
        self.expected = expected
        self.found = found_at(text, offset, expected)
        self.rule = rule
        self.context = caret_context(text, offset)
        super().__init__(self._message())

    def shifted(self, before: str) -> PegParseError:
        """Return this error placed after `before` is removed from the front of the input."""
        moved = PegParseError.__new__(PegParseError)
        moved.__dict__.update(self.__dict__)
        moved.offset = self.offset - len(before)
        moved.line = self.line - before.count("\n")
        if moved.line == 1:
            moved.column = self.column - (len(before) - before.rfind("\n") - 1)
        AnalyzerError.__init__(moved, moved._message())
        return moved

    def _message(self) -> str:
        wanted = " or ".join(self.expected) if self.expected else "something else"
        where = f"at offset {self.offset} (line {self.line}, column {self.column})"
        in_rule = f" in rule `{self.rule}`" if self.rule else ""
        return f"expected {wanted} {where}{in_rule}, found {self.found}\n{self.context}"
