"""A stream's resume points are kept one object per structure (peg/expressions.py,
RESUMES_KEPT): on every template's own rendering of a call, whole, after text and cut before
its last closing, in chunks of several sizes, two runs that leave resume points of the same
structure leave the same object (so a run that stops where it resumed is given back the very
expression it ran, and nothing is rebuilt on the way up)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rendered_calls import generated_call_or_skip, template_paths, with_text_and_cut

from analyzer.parsing.stream import StreamParser
from analyzer.peg import Expr
from analyzer.peg.captures import Capture, ToolCapture
from analyzer.peg.expressions import Choice, Repeat, Scope, Sequence, forget_resume_points

SIZES = (1, 3, 16)


def structure(expr: Expr) -> Any:
    """What a resume point is made of: the kinds a run builds, down to the grammar's own
    expressions (by identity)."""
    kind = type(expr)
    if kind is Sequence:
        assert isinstance(expr, Sequence)
        return ("sequence", *(structure(item) for item in expr.items))
    if kind is Scope:
        assert isinstance(expr, Scope)
        return ("scope", expr.names, structure(expr.body))
    if kind is ToolCapture:
        assert isinstance(expr, ToolCapture)
        return ("tool", expr.opened, structure(expr.item))
    if kind is Capture:
        assert isinstance(expr, Capture)
        return ("capture", expr.role, expr.flags, id(expr.info), structure(expr.item))
    if kind is Repeat:
        assert isinstance(expr, Repeat)
        return ("repeat", id(expr.item), expr.least, expr.most)
    if kind is Choice:
        assert isinstance(expr, Choice)
        return ("choice", *(id(alternative) for alternative in expr.alternatives))
    return id(expr)


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_resume_points_of_one_structure_are_one_object(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    for output in with_text_and_cut(rendering):
        for size in SIZES:
            forget_resume_points()  # other tests' streams may have filled the tables
            stream = StreamParser(parser.parser)
            kept: dict[Any, Expr] = {}
            for chunk in [parser.prompt.tail] + [output[at : at + size]
                                                 for at in range(0, len(output), size)]:
                stream.feed(chunk)
                same = kept.setdefault(structure(stream.expr), stream.expr)
                assert same is stream.expr, (size, output, stream.expr)
            stream.finish()
