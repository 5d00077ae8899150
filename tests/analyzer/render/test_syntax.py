"""Jinja syntax errors come back with line, column, the offending line and a caret."""

from __future__ import annotations

import pytest

from analyzer.errors import TemplateRenderError, TemplateSyntaxError
from analyzer.render.template import ChatTemplate


def syntax_error(source: str) -> TemplateSyntaxError:
    with pytest.raises(TemplateSyntaxError) as caught:
        ChatTemplate(source)
    return caught.value


def test_an_unknown_closing_tag_points_at_the_tag_name() -> None:
    error = syntax_error("{% for m in messages %}\n  {{ m.content }}\n{% endfo %}")
    assert (error.lineno, error.column) == (3, 4)
    assert str(error) == (
        "template syntax error at line 3, column 4: Encountered unknown tag 'endfo'."
        " Jinja was looking for the following tags: 'endfor' or 'else'."
        " The innermost block that needs to be closed is 'for'.\n"
        "    {% endfo %}\n"
        "       ^"
    )


def test_an_unexpected_character_points_at_it_without_jinjas_raw_offset() -> None:
    error = syntax_error("line one\n{{ messages[0] $ 1 }}")
    assert str(error) == (
        "template syntax error at line 2, column 16: unexpected char '$'\n"
        "    {{ messages[0] $ 1 }}\n"
        "                   ^"
    )


def test_an_unclosed_block_points_at_the_end_of_the_template() -> None:
    error = syntax_error("{% if messages %}\nopen")
    assert (error.lineno, error.column) == (2, 5)
    assert str(error).endswith(
        "The innermost block that needs to be closed is 'if'.\n    open\n        ^"
    )


def test_the_caret_finds_the_failing_token_among_equal_ones_on_the_line() -> None:
    # Both `}}` and both `%}` look alike: the caret must sit under the one the parser rejected.
    assert syntax_error("{{ x }}{{ x | }}").column == 15
    assert syntax_error("{% if a %}{% elif %}{% endif %}").column == 19


def test_an_unbalanced_bracket_points_at_the_closing_brace() -> None:
    error = syntax_error("{% set x = [1, 2 %}")
    assert str(error) == (
        "template syntax error at line 1, column 19: unexpected '}', expected ']'\n"
        "    {% set x = [1, 2 %}\n"
        "                      ^"
    )


def test_windows_line_endings_keep_lines_and_columns_right() -> None:
    error = syntax_error("{#- c -#}\r\n{%- if a -%}\r\n  {{ a b }}\r\n{%- endif %}")
    assert (error.lineno, error.column, error.source_line) == (3, 8, "  {{ a b }}")


def test_a_syntax_error_is_a_render_error() -> None:
    assert isinstance(syntax_error("{{"), TemplateRenderError)


def test_a_bad_escape_in_a_string_points_at_the_string() -> None:
    error = syntax_error('{{ x }}{{ "\\x" }}')
    assert str(error) == (
        "template syntax error at line 1, column 11: truncated \\xXX escape\n"
        '    {{ x }}{{ "\\x" }}\n'
        "              ^"
    )
