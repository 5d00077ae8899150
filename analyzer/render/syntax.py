"""Locate Jinja syntax errors: Jinja reports the line only, we also find the column."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from jinja2 import Environment
from jinja2.exceptions import TemplateSyntaxError as JinjaSyntaxError
from jinja2.lexer import Token, TokenStream, ignored_tokens

from analyzer.errors import TemplateSyntaxError, template_lines

_UNSEEN_BY_PARSER = ignored_tokens | {"raw_begin", "raw_end"}
_LEXER_POSITION = re.compile(r" at \d+$")
LEXER_FILE = str(Path("jinja2") / "lexer.py")


class CountingStream:
    """Count the tokens a parser pulls, to know which one it stopped at."""

    def __init__(self, stream: TokenStream) -> None:
        self.stream = stream
        self.pulled = 1  # the stream already holds its first token
        stream._iter = self._counted(stream._iter)

    def _counted(self, tokens: Iterator[Token]) -> Iterator[Token]:
        for token in tokens:
            self.pulled += 1
            yield token

    def failing_index(self, exc: BaseException) -> int | None:
        """Return the index of the token an error is about; None if the lexer cannot say."""
        stage = lexer_stage(exc)
        if stage == "tokeniter":
            return None  # the text after the last token does not lex: found by rescanning
        if stage == "wrap":
            return self.pulled  # the token being converted when its value proved invalid
        return self.current_index()

    def current_index(self) -> int:
        """Return the index of the stream's current token among the tokens the parser sees."""
        if self.stream.current.type == "eof":
            return self.pulled  # one past the last real token
        return self.pulled - 1 - len(self.stream._pushed)


def lexer_stage(exc: BaseException) -> str | None:
    """Name the lexer stage that raised this error ("tokeniter" or "wrap"), or None."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    code = tb.tb_frame.f_code
    # TokenStream.expect lives in lexer.py too, but reports what the parser expected.
    if code.co_filename.endswith(LEXER_FILE) and code.co_name in ("tokeniter", "wrap"):
        return code.co_name
    return None


def token_offsets(env: Environment, source: str) -> tuple[list[int], int | None]:
    """Return where each parser-visible token starts, and where lexing failed (if it did)."""
    text = "\n".join(template_lines(source))
    offsets: list[int] = []
    position = 0
    try:
        for _lineno, kind, raw in env.lexer.tokeniter(text, None):
            start = text.find(raw, position)
            start = position if start < 0 else start
            position = start + len(raw)
            if kind not in _UNSEEN_BY_PARSER:
                offsets.append(start)
    except JinjaSyntaxError:
        while position < len(text) and text[position] in " \t":
            position += 1
        return offsets, position
    return offsets, None


def line_and_column(source: str, offset: int) -> tuple[int, int]:
    """Convert an offset in the newline-normalized source to a 1-based line and column."""
    text = "\n".join(template_lines(source))
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def syntax_error(
    exc: JinjaSyntaxError, source: str, env: Environment, token_index: int | None
) -> TemplateSyntaxError:
    """Translate Jinja's syntax error into ours, with the column of the offending token.

    `token_index` is the parser's position among the tokens; None when the lexer failed.
    """
    message = _LEXER_POSITION.sub("", exc.message or "invalid template")
    offset = _error_offset(env, source, token_index)
    lineno, column = exc.lineno, None
    if offset is not None:
        found_line, found_column = line_and_column(source, offset)
        if found_line == lineno:  # only trust a column on the line Jinja reported
            column = found_column
    return TemplateSyntaxError(message, lineno=lineno, column=column, source=source)


def _error_offset(env: Environment, source: str, token_index: int | None) -> int | None:
    offsets, lexer_failure = token_offsets(env, source)
    if token_index is None:
        return lexer_failure
    if token_index < len(offsets):
        return offsets[token_index]
    return len("\n".join(template_lines(source)).rstrip("\n"))  # the parser hit the end
