"""Template Lab's analyzer: derive a chat template's output parser by differential rendering."""

from __future__ import annotations

from analyzer.errors import AnalyzerError, TemplateLoadError, TemplateRaisedError, TemplateRenderError
from analyzer.render import ChatTemplate

__all__ = [
    "AnalyzerError",
    "ChatTemplate",
    "TemplateLoadError",
    "TemplateRaisedError",
    "TemplateRenderError",
]
