"""`python -m analyzer robustness`: the per-perturbation table, the JSON, the exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.checks.robustness import PERTURBATIONS
from analyzer.cli.main import main

FORMATS = Path(__file__).resolve().parents[3] / "templates_corpus" / "formats"


def test_the_table_has_one_line_per_perturbation(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["robustness", str(FORMATS / "tools_tagged.jinja")])
    lines = capsys.readouterr().out.splitlines()
    assert "perturbation cases pass" in lines[0]
    for perturbation in PERTURBATIONS:
        assert any(line.split()[1:2] == [perturbation.name] for line in lines), perturbation.name
    assert "  PASS  exact-rendering" in "\n".join(lines)
    assert status == (1 if any(line.startswith("  FAIL") for line in lines) else 0)


def test_the_json_holds_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    main(["robustness", str(FORMATS / "tools_python_call.jinja"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [c["perturbation"] for c in data["cases"]] == [p.name for p in PERTURBATIONS]
    control = data["cases"][0]
    assert control["outcome"] == "pass" and control["expected_deviations"] == []


def test_a_template_without_tools_skips_everything(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["robustness", str(FORMATS / "plain.jinja")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{FORMATS / 'plain.jinja'}: 0/0 perturbation cases pass")


def test_an_unreadable_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["robustness", str(tmp_path / "missing.jinja")]) == 2
    assert "cannot read the file" in capsys.readouterr().err
