"""Python-style call lists: `[f(a=1, b='x'), g(c=[1, {'d': None}])]`.

A model writes such calls as Python source, so every argument value is read as a Python
literal (python_literals.py: quoted strings with escapes, numbers, True/False/None, nested
dicts and lists), whatever way the template happens to print values. Copying the template's
own printing instead fails on real output: a template that prints strings bare gives no
closing marker (the value would swallow the rest of the list), and one that quotes every
value puts the quote into the marker before the value (a literal without it reads as nothing).
"""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator.build import spaced
from analyzer.generator.python_literals import PythonLiteral, PythonLiteralDialect
from analyzer.model import Analysis, ToolFormat
from analyzer.peg import Role

DIALECT = PythonLiteralDialect()


def is_python_call_list(analysis: Analysis) -> bool:
    """Tell whether the template writes calls as `name(key=value, ...)`."""
    tools = analysis.tools
    args = tools.arguments
    return (tools.format.mode == ToolFormat.TAG_WITH_TAGGED
            and tools.function.name_suffix.strip() == "("
            and not args.start.strip() and args.end.strip() == ")"
            and not args.name_prefix.strip() and args.name_suffix.strip().startswith("="))


def python_argument(key: p.Expr) -> p.Expr:
    """Match `key = literal`; once the `=` is read the value is settled (it may stream)."""
    value = p.space() + p.capture(Role.ARG_JSON_VALUE, PythonLiteral(), DIALECT)
    return p.arg_name(key) + spaced("=") + p.commit() + value
