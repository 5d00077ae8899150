"""The analyzer's exceptions: one base class, subclasses with structured fields."""

from __future__ import annotations


class AnalyzerError(Exception):
    """Base class of every error the analyzer raises on purpose."""


class TemplateLoadError(AnalyzerError):
    """A template file or config could not be read as a chat template."""

    def __init__(self, message: str, *, source: str = "") -> None:
        super().__init__(message)
        self.source = source


class TemplateRenderError(AnalyzerError):
    """Rendering a chat template failed (syntax, runtime, sandbox or limits)."""

    def __init__(self, message: str, *, lineno: int | None = None) -> None:
        super().__init__(message)
        self.lineno = lineno


class TemplateRaisedError(TemplateRenderError):
    """The template itself refused the input through `raise_exception`."""

    def __init__(self, template_message: str, *, lineno: int | None = None) -> None:
        super().__init__(f"the template raised an exception: {template_message}", lineno=lineno)
        self.template_message = template_message
