"""`python -m analyzer check`: failures with diffs, JSON records, the closing count, exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analyzer.cli.main import main

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"
SHARED_VECTORS = (Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "vectors"
                  / "llamacpp-test-chat.jsonl")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


def case(seq: int, output: str, expected: dict[str, Any], template: str = "tools_tag_json.jinja",
         **extra: Any) -> dict[str, Any]:
    """A vector in the shared file's format."""
    return {"seq": seq, "template": template, "options": {
        "reasoning_format": "auto", "enable_thinking": None, "parallel_tool_calls": False,
        "tool_choice": "auto", "tools": TOOLS, "json_schema": None,
        "continue_final_message": "none", "chat_template_kwargs": {}},
        "messages_oaicompat": [{"role": "user", "content": "Weather?"}],
        "input": output, "is_partial": False,
        "expected": {"role": "assistant", "content": "", "reasoning_content": "",
                     "tool_calls": [], **expected}, **extra}


def write(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


GOOD = case(0, '<function=get_weather>{"city": "Paris"}</function>', {"tool_calls": [
    {"name": "get_weather", "arguments": '{"city": "Paris"}', "id": ""}]}, id="weather")
WRONG = case(1, "Sunny.", {"content": "Rainy."})
BROKEN = case(2, "Hi", {"content": "Hi"}, template="no_such_template.jinja")


def test_a_passing_file_exits_0_with_the_count(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    vectors = write(tmp_path / "v.jsonl", [GOOD])
    assert main(["check", str(vectors), "--templates", str(FORMATS)]) == 0
    assert capsys.readouterr().out == "1 passed, 0 failed\n"


def test_failures_print_a_diff_and_exit_1(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    vectors = write(tmp_path / "v.jsonl", [GOOD, WRONG])
    assert main(["check", str(vectors), "--templates", str(FORMATS)]) == 1
    out = capsys.readouterr().out
    assert "FAIL seq 1  tools_tag_json.jinja" in out
    assert "content:\n      expected 'Rainy.'\n      actual   'Sunny.'" in out
    assert out.endswith("1 passed, 1 failed\n")


def test_a_template_that_cannot_load_is_a_failure_not_a_crash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vectors = write(tmp_path / "v.jsonl", [BROKEN, GOOD])
    assert main(["check", str(vectors), "--templates", str(FORMATS)]) == 1
    out = capsys.readouterr().out
    assert "error: TemplateLoadError" in out and "no_such_template.jinja" in out
    assert out.endswith("1 passed, 1 failed\n")


def test_json_prints_one_record_per_vector_then_the_count(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vectors = write(tmp_path / "v.jsonl", [GOOD, WRONG, BROKEN])
    assert main(["check", str(vectors), "--templates", str(FORMATS), "--json"]) == 1
    *records, closing = capsys.readouterr().out.splitlines()
    good, wrong, broken = (json.loads(r) for r in records)
    assert closing == "1 passed, 2 failed"
    assert good["id"] == "weather" and good["passed"] and good["error"] is None
    assert good["actual"]["tool_calls"][0]["function"] == {
        "name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert "id" not in wrong and wrong["actual"]["content"] == "Sunny." and not wrong["passed"]
    assert broken["actual"] is None and "cannot read the file" in broken["error"]


def test_templates_default_to_the_folder_beside_the_vectors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "templates").mkdir()
    source = (FORMATS / "tools_tag_json.jinja").read_text(encoding="utf-8")
    (tmp_path / "templates" / "tools_tag_json.jinja").write_text(source, encoding="utf-8")
    (tmp_path / "vectors").mkdir()
    vectors = write(tmp_path / "vectors" / "v.jsonl", [GOOD])
    assert main(["check", str(vectors)]) == 0
    assert capsys.readouterr().out == "1 passed, 0 failed\n"


def test_a_missing_vector_file_is_a_clear_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl: cannot read the file" in capsys.readouterr().err


@pytest.mark.skipif(not SHARED_VECTORS.is_file(), reason="../shared vectors are not present")
def test_the_shared_vector_file_ends_with_its_count(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", str(SHARED_VECTORS)])
    closing = capsys.readouterr().out.splitlines()[-1]
    passed, failed = (int(word) for word in closing.replace(",", "").split()[::2])
    assert passed + failed == 427 and status == (1 if failed else 0)
