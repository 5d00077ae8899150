"""A template's source as the pages show it: Jinja highlighted, one anchor per line.

Pygments escapes the text it highlights; line numbers are drawn by CSS (not text), so
copying the source copies the template exactly.
"""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DjangoLexer  # Pygments' lexer for Jinja and Django templates

_LINE_MENTION = re.compile(r"\bline (\d+)\b")


def line_anchor(number: int) -> str:
    """The element id of a source line (the link target of errors that name it)."""
    return f"L-{number}"


def highlighted_lines(source: str) -> SafeString:
    """Highlight the source and wrap each line in a span with its anchor."""
    html = highlight(source, DjangoLexer(ensurenl=False), HtmlFormatter(nowrap=True))
    lines = html.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the text after a final newline is no line of its own
    ends = ["\n"] * (len(lines) - 1) + ["\n" if source.endswith("\n") else ""]
    wrapped = (
        f'<span class="line" id="{line_anchor(n)}">{line}{end}</span>'
        for n, (line, end) in enumerate(zip(lines, ends, strict=True), start=1)
    )
    return mark_safe("".join(wrapped))  # noqa: S308 - Pygments escaped every token


def linked_error(message: str, line_count: int) -> SafeString:
    """Escape an error message and link each 'line N' in it to that line of the source."""

    def link(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if not 1 <= number <= line_count:
            return match.group(0)
        return f'<a class="line-link" href="#{line_anchor(number)}">{match.group(0)}</a>'

    return mark_safe(_LINE_MENTION.sub(link, str(escape(message))))  # noqa: S308 - escaped first
