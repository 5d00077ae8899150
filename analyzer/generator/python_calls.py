"""Python-style call lists: `[f(a=1, b='x'), g(c=[1, {'d': None}])]`.

A model writes such calls as Python source, so every argument value is read as a Python
literal (single- or double-quoted strings with escapes, ints, floats, True/False/None, nested
dicts and lists), whatever way the template happens to print values. Copying the template's
own printing instead fails on real output: a template that prints strings bare gives no
closing marker (the value would swallow the rest of the list), and one that quotes every
value puts the quote into the marker before the value (a literal without it reads as nothing).
The mapper rewrites each complete literal as JSON.
"""

from __future__ import annotations

from analyzer import peg as p
from analyzer.generator.build import spaced
from analyzer.model import Analysis, ToolFormat


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
    value = p.space() + p.arg_json_value(p.json_value(python=True))
    return p.arg_name(key) + spaced("=") + p.commit() + value
