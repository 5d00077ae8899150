"""`python -m analyzer serve-flags`: each engine's command line, problems, and the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli.main import main

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def test_it_prints_each_engines_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    template = FORMATS / "tools_json_native.jinja"
    assert main(["serve-flags", str(template)]) == 0
    out = capsys.readouterr().out
    assert f"vllm serve MODEL --chat-template {template} --enable-auto-tool-choice " \
           "--tool-call-parser hermes" in out
    assert f"--model-path MODEL --chat-template {template} --tool-call-parser hermes" in out
    assert f"llama-server -m MODEL.gguf --jinja --chat-template-file {template}" in out


def test_a_format_no_parser_reads_exits_1_and_says_why(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-flags", str(FORMATS / "tools_markdown.jinja")]) == 1
    out = capsys.readouterr().out
    assert "PROBLEM" in out and "problem: none of the" in out


def test_json_lists_the_advice_per_engine(capsys: pytest.CaptureFixture[str]) -> None:
    main(["serve-flags", str(FORMATS / "tools_tagged.jinja"), "--json"])
    data = json.loads(capsys.readouterr().out)
    advice = {a["engine"]: a for a in data["engines"]}
    assert data["structural_tag"]["available"] is False  # tagged arguments are not JSON
    assert advice["vllm"]["tool_parser"] == "qwen3_coder" and advice["vllm"]["ok"] is True
    assert advice["sglang"]["command_line"].endswith("--tool-call-parser qwen3_coder")


def test_a_json_call_format_prints_its_structural_tag_checked(
        capsys: pytest.CaptureFixture[str]) -> None:
    main(["serve-flags", str(FORMATS / "tools_json_native.jinja"), "--json"])
    tag = json.loads(capsys.readouterr().out)["structural_tag"]
    assert tag["available"] and tag["llguidance_check"] == "accepted"
    structure = tag["response_format"]["structures"][0]
    assert "get_weather" in structure["begin"] and structure["schema"]["type"] == "object"
