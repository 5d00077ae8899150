"""Python-style call lists read Python literals, whatever way the template prints values.

The outputs are written the way Python itself prints calls (`repr` of each value), between
the section markers the analysis read off each template; the expected calls are the very
values that were printed. Three templates print values three ways: quoted strings and bare
`True`/`None` (Python's spelling), everything through `tojson`, everything in double quotes.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from analyzer.analysis.pipeline import analyze
from analyzer.generator import GeneratedParser, generate_parser
from analyzer.generator.python_calls import is_python_call_list
from analyzer.model import Analysis
from analyzer.parsing.options import ParseOptions
from analyzer.parsing.stream import accumulate
from analyzer.render.loading import load_template_file

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
FIXTURES = ROOT / "tests" / "analyzer" / "fixtures" / "templates"
TEMPLATES = {
    "python-literals": FORMATS / "tools_python_call.jinja",
    "tojson-values": FIXTURES / "python_calls_tojson.jinja",
    "quoted-values": FIXTURES / "python_calls_quoted.jinja",
}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer"},
            "ratio": {"type": "number"}, "exact": {"type": "boolean"},
            "cursor": {"type": ["integer", "null"]}, "filters": {"type": "object"},
            "tags": {"type": "array"}}}}},
]
# Values chosen to break a value grammar copied from a template's printing: commas,
# brackets, parentheses and both quotes inside strings, an escape, nested and empty containers.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "a, b) c] 'single' \"double\"\n\\end", "limit": 3, "ratio": -0.25,
                "exact": True, "cursor": None,
                "filters": {"country": "FR", "range": {"min": 1, "max": [2, 3.5]},
                            "open": False, "none": None, "empty": {}},
                "tags": ["art", "two, words", []]}),
    ("get_weather", {"city": "Zürich"}),
    ("search", {"query": "", "filters": {}, "tags": []}),
]


@cache
def analysis_of(label: str) -> Analysis:
    return analyze(load_template_file(TEMPLATES[label]))


def parser_of(label: str) -> GeneratedParser:
    options = ParseOptions.make(tools=TOOLS, parallel_tool_calls=True)
    return generate_parser(analysis_of(label), options)


def python_call(name: str, arguments: dict[str, Any], separator: str) -> str:
    """Write a call as Python prints it."""
    return f"{name}(" + separator.join(f"{k}={v!r}" for k, v in arguments.items()) + ")"


def python_list(label: str, calls: list[tuple[str, dict[str, Any]]], separator: str) -> str:
    """Write calls as a Python list between the template's section markers."""
    fmt = analysis_of(label).tools.format
    body = separator.join(python_call(name, args, separator) for name, args in calls)
    return fmt.section_start.strip() + body + fmt.section_end.strip()


def read_calls(label: str, output: str) -> list[tuple[str, Any]]:
    message = parser_of(label).parse(output)
    assert message.content == ""
    return [(c.name, json.loads(c.arguments)) for c in message.tool_calls]


@pytest.mark.parametrize("label", sorted(TEMPLATES))
def test_the_templates_write_python_call_lists(label: str) -> None:
    assert is_python_call_list(analysis_of(label))


def test_a_tagged_template_is_no_python_call_list() -> None:
    assert not is_python_call_list(analyze(load_template_file(FORMATS / "tools_tagged.jinja")))


@pytest.mark.parametrize("separator", [", ", ",", " , "])
@pytest.mark.parametrize("label", sorted(TEMPLATES))
def test_python_literals_are_read_whatever_the_template_prints(label: str,
                                                               separator: str) -> None:
    output = python_list(label, CALLS, separator)
    assert read_calls(label, output) == CALLS


@pytest.mark.parametrize("label", sorted(TEMPLATES))
def test_double_quoted_strings_and_json_spelling_are_read(label: str) -> None:
    arguments = {"query": 'say "hi", it\'s', "exact": False, "cursor": None, "tags": ["x"]}
    body = ", ".join(f"{k}={json.dumps(v)}" for k, v in arguments.items())
    fmt = analysis_of(label).tools.format
    output = f"{fmt.section_start.strip()}search({body}){fmt.section_end.strip()}"
    assert read_calls(label, output) == [("search", arguments)]


@pytest.mark.parametrize("label", sorted(TEMPLATES))
def test_streaming_in_random_chunks_equals_one_shot(label: str) -> None:
    output = python_list(label, CALLS, ", ")
    one_shot = parser_of(label).parse(output)
    rng = random.Random(label)
    for _ in range(5):
        stream = parser_of(label).stream()
        deltas, at = [], 0
        while at < len(output):
            step = rng.randint(1, 7)
            deltas += stream.feed(output[at:at + step])
            at += step
        deltas += stream.finish()
        assert accumulate(deltas) == one_shot


def test_a_call_of_an_undeclared_function_stays_content() -> None:
    output = python_list("python-literals", [("delete_all", {"really": True})], ", ")
    message = parser_of("python-literals").parse(output)
    assert (message.content, message.tool_calls) == (output, ())
