"""The analyzer's exceptions: one base class, subclasses with structured fields."""

from __future__ import annotations

import re
from typing import Literal

LoadProblem = Literal[
    "empty", "binary", "invalid_json", "no_chat_template", "bad_config", "unknown_name",
    "unreadable",
]
Limit = Literal["range", "output_size", "time", "recursion", "template_size", "memory"]
# What bounds a whole analysis: its rendering time, the wall clock and the memory of the
# child process it runs in (see analyzer.analysis.isolated).
AnalysisLimit = Literal["analysis_time", "render_time", "render_limit", "wall_clock", "memory"]
# Jinja splits lines on these only (str.splitlines also splits on \f, \v, \u2028...).
_NEWLINE = re.compile(r"\r\n|\r|\n")


class AnalyzerError(Exception):
    """Base class of every error the analyzer raises on purpose."""


def template_lines(source: str) -> list[str]:
    """Split a template into lines the way Jinja numbers them."""
    return _NEWLINE.split(source)


def source_excerpt(source: str, lineno: int | None, column: int | None = None) -> str:
    """Return template line `lineno` indented, with a caret under (1-based) `column` if known."""
    lines = template_lines(source)
    if lineno is None or not 1 <= lineno <= len(lines):
        return ""
    line = lines[lineno - 1].expandtabs(1)
    excerpt = f"    {line}"
    if column is not None:
        excerpt += "\n    " + " " * min(column - 1, len(line)) + "^"
    return excerpt


class TemplateLoadError(AnalyzerError):
    """A template file or config could not be read as a chat template."""

    def __init__(
        self,
        message: str,
        *,
        problem: LoadProblem,
        filename: str = "",
        lineno: int | None = None,
        column: int | None = None,
        available_names: tuple[str, ...] = (),
    ) -> None:
        where = f"{filename}: " if filename else ""
        super().__init__(where + message)
        self.problem = problem
        self.filename = filename
        self.lineno = lineno
        self.column = column
        self.available_names = available_names


class InvalidInputError(AnalyzerError):
    """The conversation, tools or documents given to a render have the wrong shape."""


class TemplateRenderError(AnalyzerError):
    """Rendering a chat template failed (syntax, runtime, sandbox or limits).

    `lenient_allows` is set when the failure is one transformers has and llama.cpp's Jinja
    has not (in-place change of a template-made list, tojson of a generator): a render in
    lenient mode goes past it.
    """

    def __init__(
        self,
        message: str,
        *,
        lineno: int | None = None,
        source_line: str = "",
        lenient_allows: bool = False,
    ) -> None:
        where = f"line {lineno}: " if lineno is not None else ""
        text = where + message
        if source_line:
            text += "\n    " + source_line.strip()
        super().__init__(text)
        self.message = message
        self.lineno = lineno
        self.source_line = source_line
        self.lenient_allows = lenient_allows


class TemplateSyntaxError(TemplateRenderError):
    """The template is not valid Jinja; carries line, 1-based column and the offending line."""

    def __init__(
        self, message: str, *, lineno: int | None, column: int | None, source: str
    ) -> None:
        lines = template_lines(source)
        line = lines[lineno - 1] if lineno is not None and 1 <= lineno <= len(lines) else ""
        Exception.__init__(self, _syntax_text(message, lineno, column, source))
        self.message = message
        self.lineno = lineno
        self.column = column
        self.source_line = line


def _syntax_text(message: str, lineno: int | None, column: int | None, source: str) -> str:
    if lineno is None:
        return f"template syntax error: {message}"
    where = f"line {lineno}" + (f", column {column}" if column is not None else "")
    excerpt = source_excerpt(source, lineno, column)
    return f"template syntax error at {where}: {message}" + (f"\n{excerpt}" if excerpt else "")


class TemplateRaisedError(TemplateRenderError):
    """The template itself refused the input through `raise_exception`."""

    def __init__(
        self, template_message: str, *, lineno: int | None = None, source_line: str = ""
    ) -> None:
        super().__init__(
            f"the template raised an exception: {template_message}",
            lineno=lineno,
            source_line=source_line,
        )
        self.template_message = template_message


class RenderLimitError(TemplateRenderError):
    """Rendering was stopped because it exceeded a resource limit."""

    def __init__(
        self,
        message: str,
        *,
        limit: Limit,
        allowed: float,
        lineno: int | None = None,
        source_line: str = "",
    ) -> None:
        super().__init__(message, lineno=lineno, source_line=source_line)
        self.limit = limit
        self.allowed = allowed


class SandboxViolationError(TemplateRenderError):
    """The template tried something the sandbox forbids (private attributes, mutation)."""

    def __init__(
        self,
        reason: str,
        *,
        lineno: int | None = None,
        source_line: str = "",
        lenient_allows: bool = False,
    ) -> None:
        super().__init__(
            f"the sandbox refused an unsafe operation: {reason}",
            lineno=lineno,
            source_line=source_line,
            lenient_allows=lenient_allows,
        )
        self.reason = reason


class AnalysisLimitError(AnalyzerError):
    """A whole analysis was stopped because it went over one of its bounds (`limit`)."""

    def __init__(
        self, message: str, *, limit: AnalysisLimit, allowed: float, what: str = "analysis"
    ) -> None:
        super().__init__(f"the {what} was stopped: {message}")
        self.message = message
        self.limit = limit
        self.allowed = allowed


class IsolatedAnalysisError(AnalyzerError):
    """An analysis run in a child process failed; `kind` names the child's exception class."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind
