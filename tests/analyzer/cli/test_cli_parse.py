"""`python -m analyzer parse`: the message JSON, streamed deltas, options, and input errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli.main import main

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
CALL = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    output = tmp_path / "output.txt"
    output.write_text("Checking." + CALL, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": TOOLS}), encoding="utf-8")
    return output, tools


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["parse", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_it_prints_the_message(files: tuple[Path, Path],
                               capsys: pytest.CaptureFixture[str]) -> None:
    output, tools = files
    status, out, _ = run(capsys, str(FORMATS / "tools_tagged.jinja"), "--input", str(output),
                         "--tools", str(tools))
    message = json.loads(out)
    assert status == 0 and message["content"] == "Checking."
    assert message["tool_calls"] == [{"id": "", "type": "function", "function": {
        "name": "get_weather", "arguments": '{"city": "Paris", "days": 2}'}}]


def test_stream_chunks_print_deltas_that_add_up(files: tuple[Path, Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    output, tools = files
    status, out, _ = run(capsys, str(FORMATS / "tools_tagged.jinja"), "--input", str(output),
                         "--tools", str(tools), "--stream-chunk", "5")
    deltas = [json.loads(line) for line in out.splitlines()]
    content = "".join(d.get("content", "") for d in deltas)
    headers = [c for d in deltas for c in d.get("tool_calls", []) if "type" in c]
    arguments = "".join(c["function"].get("arguments", "")
                        for d in deltas for c in d.get("tool_calls", []))
    assert status == 0 and content == "Checking."
    assert [h["function"]["name"] for h in headers] == ["get_weather"]
    assert json.loads(arguments) == {"city": "Paris", "days": 2}


def test_reasoning_format_none_and_thinking_flag(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "output.txt"
    output.write_text("plan</think>Answer", encoding="utf-8")
    template = str(FORMATS / "think_forced_open.jinja")
    _, out, _ = run(capsys, template, "--input", str(output), "--enable-thinking")
    assert json.loads(out)["reasoning_content"].strip() == "plan"
    _, out, _ = run(capsys, template, "--input", str(output), "--enable-thinking",
                    "--reasoning-format", "none")
    assert json.loads(out)["content"] == "<think>\nplan</think>Answer"


def test_partial_output_holds_back_an_unfinished_marker(
        tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, tools = files
    output = tmp_path / "partial.txt"
    output.write_text("Checking.<tool_c", encoding="utf-8")
    _, out, _ = run(capsys, str(FORMATS / "tools_tagged.jinja"), "--input", str(output),
                    "--tools", str(tools), "--partial")
    assert json.loads(out)["content"] == "Checking."
    _, out, _ = run(capsys, str(FORMATS / "tools_tagged.jinja"), "--input", str(output),
                    "--tools", str(tools))
    assert json.loads(out)["content"] == "Checking.<tool_c"


def test_grammar_goes_to_standard_error(files: tuple[Path, Path],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    output, tools = files
    _, out, err = run(capsys, str(FORMATS / "tools_tagged.jinja"), "--input", str(output),
                      "--tools", str(tools), "--grammar")
    assert "call-get_weather <- " in err and json.loads(out)["tool_calls"]


def test_a_tools_file_that_is_not_a_list_is_a_clear_error(
        tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    output, _ = files
    tools = tmp_path / "bad.json"
    tools.write_text('{"name": "x"}', encoding="utf-8")
    status, _, err = run(capsys, str(FORMATS / "plain.jinja"), "--input", str(output),
                         "--tools", str(tools))
    assert status == 2
    assert "expected a JSON array of tool definitions" in err


def test_a_missing_output_file_is_a_clear_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, str(FORMATS / "plain.jinja"), "--input",
                         str(tmp_path / "none.txt"))
    assert status == 2 and "none.txt: cannot read the file" in err


def test_a_malformed_output_exits_zero_and_says_where(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "output.txt"
    output.write_text('<function=get_weather>{"city": }</function>', encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    status, out, err = run(capsys, str(FORMATS / "tools_tag_json.jinja"), "--input", str(output),
                           "--tools", str(tools))
    assert status == 0 and json.loads(out)["tool_calls"][0]["function"]["name"] == "get_weather"
    assert err.startswith("deviation: line 1, column 32 (offset 31): malformed_call: expected ")
    assert err.rstrip().endswith(" " * 31 + "^")


@pytest.mark.parametrize("stream", [False, True])
def test_a_marker_kept_as_text_is_noted_on_standard_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stream: bool
) -> None:
    output = tmp_path / "output.txt"
    output.write_text('Hi <function=get_wether>{"city": "Oslo"}</function>', encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    chunking = ["--stream-chunk", "3"] if stream else []
    status, out, err = run(capsys, str(FORMATS / "tools_tag_json.jinja"), "--input", str(output),
                           "--tools", str(tools), *chunking)
    assert status == 0 and "<function=get_we" in out  # kept as content
    assert err.startswith("deviation: line 1, column 14 (offset 13): unknown_function: expected "
                          "`get_weather`, found `get_wether>`; kept as content\n")
    assert err.rstrip().endswith(" " * 13 + "^")


@pytest.mark.parametrize("stream", [False, True])
def test_json_output_lists_the_deviations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stream: bool
) -> None:
    output = tmp_path / "output.txt"
    output.write_text('Hi <function=get_wether>{"city": "Oslo"}</function>', encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    chunking = ["--stream-chunk", "3"] if stream else []
    status, out, _ = run(capsys, str(FORMATS / "tools_tag_json.jinja"), "--input", str(output),
                         "--tools", str(tools), "--json", *chunking)
    last = out.strip().splitlines()[-1] if stream else out
    deviations = json.loads(last)["deviations"]
    assert status == 0 and [d["kind"] for d in deviations] == ["unknown_function"]
    assert deviations[0]["action"] == "kept_as_content" and deviations[0]["offset"] == 13


def test_a_clean_output_has_no_deviation(files: tuple[Path, Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    output, tools = files
    status, out, err = run(capsys, str(FORMATS / "tools_tagged.jinja"), "--input", str(output),
                           "--tools", str(tools), "--json")
    assert status == 0 and json.loads(out)["deviations"] == [] and err == ""
