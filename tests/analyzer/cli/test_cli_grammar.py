"""Tests for analyzer/cli/grammar.py: `python -m analyzer grammar FILE --tools TOOLS.json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.canonical import from_jsonable
from analyzer.cli.main import main
from analyzer.gbnf import GrammarResult, check_gbnf_strict, grammar_accepts

# A small Hermes-style template: each call is <tool_call>{"name": ..., "arguments": ...}.
TEMPLATE = """\
{%- if tools %}<|im_start|>system
Tools: {{ tools | tojson }}<|im_end|>
{% endif %}
{%- for m in messages -%}
<|im_start|>{{ m.role }}
{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>
{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}
</tool_call>
{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>
{% endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}
"""
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}},
    "required": ["location"]}}}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>'


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    template = tmp_path / "hermes.jinja"
    template.write_text(TEMPLATE, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    return template, tools


def test_prints_a_gbnf_file_with_triggers_as_comments(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    template, tools = files
    assert main(["grammar", str(template), "--tools", str(tools)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == [
        "# lazy: yes", "# trigger (word): '<tool_call>'",
        "# preserved tokens: '<tool_call>' '</tool_call>'"]
    assert check_gbnf_strict(out) == []
    assert grammar_accepts(out, CALL)
    assert not grammar_accepts(out, CALL.replace("get_weather", "get_time"))


def test_json_output_is_the_grammar_result(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    template, tools = files
    assert main(["grammar", str(template), "--tools", str(tools), "--tool-choice", "required",
                 "--json"]) == 0
    result = from_jsonable(GrammarResult, json.loads(capsys.readouterr().out), "$")
    assert (result.lazy, result.triggers) == (False, ())
    assert grammar_accepts(result.grammar, "Checking.\n" + CALL)


def test_tools_may_be_wrapped_in_an_object(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template, _ = files
    wrapped = tmp_path / "request.json"
    wrapped.write_text(json.dumps({"tools": TOOLS}), encoding="utf-8")
    assert main(["grammar", str(template), "--tools", str(wrapped)]) == 0
    assert grammar_accepts(capsys.readouterr().out, CALL)


def test_without_tools_it_says_no_grammar_is_needed(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["grammar", str(files[0])]) == 0
    assert capsys.readouterr().out == (
        "# lazy: no\n# preserved tokens: '<tool_call>' '</tool_call>'\n"
        "# no grammar: the request needs no constraint\n")


def test_a_response_schema_constrains_the_answer(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object", "properties": {"n": {"type": "integer"}}, '
                      '"required": ["n"]}', encoding="utf-8")
    assert main(["grammar", str(files[0]), "--json-schema", str(schema)]) == 0
    out = capsys.readouterr().out
    assert grammar_accepts(out, '{"n": 1}')
    assert not grammar_accepts(out, '{"n": "1"}')


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "error: --tools {path}: cannot read the file (No such file or directory)"),
        ("[1,", "error: --tools {path}: not JSON (Expecting value at line 1, column 4)"),
        ('{"a": 1}', "error: --tools {path}: expected a JSON array of tool definitions, "
                     "found dict"),
        ("[1]", "error: tools[0]: expected {'type': 'function', 'function': {'name': ...}}, "
                "found 1"),
    ],
)
def test_bad_tool_files_exit_2_with_the_reason(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    content: str | None, message: str,
) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["grammar", str(files[0]), "--tools", str(path)]) == 2
    assert capsys.readouterr().err.strip() == message.replace("{path}", str(path))
