"""The template source as pages show it: highlighted, one anchor per line, errors linked."""

from __future__ import annotations

import html
import re

from lab.analyses.source_view import highlighted_lines, linked_error


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_each_line_gets_its_anchor_and_the_text_is_the_source_exactly() -> None:
    for source in ("{% if x %}\n<b>{{ m.content }}</b>\n{% endif %}\n", "a\n\nb"):
        markup = str(highlighted_lines(source))
        assert _text(markup) == source
        assert markup.count('class="line"') == len(source.splitlines())
        assert 'id="L-1"' in markup and f'id="L-{len(source.splitlines())}"' in markup


def test_jinja_is_highlighted_and_markup_in_the_source_is_escaped() -> None:
    markup = str(highlighted_lines("<script>alert(1)</script>{{ messages }}"))
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert '<span class="nv">messages</span>' in markup


def test_an_error_links_each_line_it_names_and_is_escaped() -> None:
    message = "template syntax error at line 3, column 9: unexpected '<}>'\nsee line 40"
    linked = str(linked_error(message, line_count=10))
    assert '<a class="line-link" href="#L-3">line 3</a>' in linked
    assert "line 40" in linked and 'href="#L-40"' not in linked  # past the end: no link
    assert "&lt;}&gt;" in linked
