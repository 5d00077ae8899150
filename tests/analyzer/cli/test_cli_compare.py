"""`python -m analyzer compare`: the three diffs in words, the exit status, the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli.main import main

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def test_it_reports_source_analysis_and_behaviour(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["compare", str(FORMATS / "think_tag_based.jinja"),
                   str(FORMATS / "think_forced_open.jinja")])
    out = capsys.readouterr().out
    assert status == 1
    assert "Source: " in out and "lines removed" in out
    assert 'reasoning.mode: "TAG_BASED" -> "FORCED_OPEN"' in out
    assert "canonical conversations render differently" in out and "[[" in out


def test_the_same_template_twice_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    template = str(FORMATS / "plain.jinja")
    assert main(["compare", template, template]) == 0
    out = capsys.readouterr().out
    assert "Source: identical" in out and "Analysis: 0 fields differ" in out
    assert "Behaviour: 0 of" in out


def test_json_is_the_canonical_comparison(capsys: pytest.CaptureFixture[str]) -> None:
    main(["compare", str(FORMATS / "plain.jinja"), str(FORMATS / "tools_tagged.jinja"),
          "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["name_b"].endswith("tools_tagged.jinja") and data["behaviour"]
