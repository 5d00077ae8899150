"""Whole parses take shortcuts where they record no failures (the JSON call grammar's member
loops that end at a closing or at the name's key, a call object's members read by one loop,
arguments decoded where they are read, a tagged argument loop over at the arguments' end): a
run that records failures (a trace) takes none. Both must give the same outcome and the same
events, for every template's rendering of two calls, and for that rendering broken in the ways
models break it (cut, characters dropped or doubled, wrong names and keys, broken JSON)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rendered_calls import (
    expressions_in,
    generated_call_or_skip,
    template_paths,
    whole_outcome,
)

from analyzer.generator.arguments import ByFirstCharacter
from analyzer.generator.tools_json import EndsBefore, MemberLoop, NameMember, SeparatorBeforeCall
from analyzer.peg import Expr

EDITS = (
    ('"name"', '"nmae"'), ('"name"', '"id": 7, "name"'), ('"name"', "'name'"),
    ('"arguments"', '"parameters"'), ('"arguments"', '"args"'),
    ('"arguments": {', '"arguments": "{'),
    ("search_records", "search_recrods"), ('}', ' }'), ('}', '},'), ('}', ', "x": 1}'),
    ('{', '{ '), ('{', '[{'), ('"', "'"), (":", " : "), ('"hotels"', "hotels"),
    ('"hotels"', '"hot\\els"'), ('"Paris"', '"Paris\\"'), ('"Paris"', '1e'),
    ('}', '};'), ('}', '}\n'), ('}', '} ; '), ('}\n', '}\n;'),
    # A call object's members read by one loop (MemberLoop): the name twice, an escaped or
    # spaced key, known keys twice or before the name, other keys with object values.
    ('"name"', '"name": "search_records", "name"'), ('"name"', '"na\\u006de"'),
    ('"name"', '\n\t"name"'), ('"name"', '"name"\n'), ('"arguments"', '"arguments" \t'),
    ('"arguments"', '"arguments": {}, "arguments"'), ('{', '{"extra": {"a": [1]}, '),
    ('{', '{"arguments": {"q": 1}, '), ('}', ', "extra": {"b": 2}}'), ('}', ',}'),
    ('{', '{"na\\"me": 1, '), ('{', '{"": 0, '), ('}]', '}, {"arguments": {"q": 1}}]'),
    ('}]', '}, {"arguments": {}, "name": "search_records", "name": "x"}]'),
    # An argument loop over at the arguments' end (EndsBefore): a value that fails after its
    # name committed (a quoted dialect's broken list), and markup before the end.
    ('<|"|>hotels<|"|>', "[1 2]"), ('<|"|>Paris<|"|>', "{a 1}"), ('<|"|>hotels<|"|>', "7 }"),
)



def variants(output: str) -> list[str]:
    """The rendering, edited once each way, and cut at a few places."""
    found = [output, "Sure.\n" + output]
    for old, new in EDITS:
        at = output.find(old)
        if at >= 0:
            found.append(output[:at] + new + output[at + len(old):])
            last = output.rfind(old)
            found.append(output[:last] + new + output[last + len(old):])
    step = max(1, len(output) // 12)
    for at in range(1, len(output), step):
        found += [output[:at], output[:at] + output[at + 1:], output[:at] + output[at - 1:]]
    return found



def uses_shortcuts(start: Expr) -> bool:
    """Tell whether the grammar holds an expression with a whole-parse shortcut."""
    kinds = (EndsBefore, ByFirstCharacter, SeparatorBeforeCall, NameMember, MemberLoop)
    return any(isinstance(expr, kinds) for expr in expressions_in(start))


@pytest.mark.parametrize("path", template_paths(), ids=lambda p: p.stem)
def test_whole_parse_shortcuts_give_the_general_paths_results(path: Path) -> None:
    parser, rendering = generated_call_or_skip(path)
    start = parser.parser.start
    if not uses_shortcuts(start):
        pytest.skip("no JSON arguments or call objects in this grammar")
    for output in variants(rendering):
        text = parser.prompt.tail + output
        assert whole_outcome(start, text, False) == whole_outcome(start, text, True), output
