"""Errors raised while building or checking grammars."""

from __future__ import annotations

from analyzer.errors import AnalyzerError


class GrammarError(AnalyzerError):
    """Base class of grammar-side errors."""


class SchemaError(GrammarError):
    """A JSON schema cannot be turned into grammar rules."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"schema at {path or '/'}: {message}")
        self.path = path


class GrammarRequestError(GrammarError):
    """The request asks for a grammar the analysis cannot give (e.g. calls without a format)."""


class GrammarCompileError(GrammarError):
    """A grammar engine refused the grammar text."""

    def __init__(self, detail: str, *, engine: str) -> None:
        super().__init__(f"{engine} could not compile the grammar: {detail}")
        self.engine = engine
        self.detail = detail
