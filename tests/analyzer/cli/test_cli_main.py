"""`python -m analyzer analyze`: the readable report, the JSON, and the whole corpus."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer import analysis_from_json, analysis_to_json
from analyzer.analysis.pipeline import analyze_uncached
from analyzer.cli.main import main, subcommand_modules
from analyzer.render.loading import TemplateSource
from analyzer.version import ANALYZER_VERSION

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"
CORPUS_FILES = sorted(CORPUS.glob("*.jinja")) if CORPUS.is_dir() else []


def test_the_report_shows_caps_modes_markers_and_diffs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(FORMATS / "tools_tagged.jinja")]) == 0
    out = capsys.readouterr().out
    for heading in ("Capabilities", "Reasoning", "Tools", "Generation prompts", "Markers",
                    "Comparisons"):
        assert heading in out
    assert 'function.name_prefix: "<function="' in out
    assert "[[" in out and "]]" in out  # the differing part of a variant pair
    assert "from T3" in out  # a marker's provenance


def test_json_output_is_the_canonical_analysis(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(FORMATS / "plain.jinja"), "--json"]) == 0
    analysis = analysis_from_json(capsys.readouterr().out)
    assert analysis.content.mode == "PLAIN"


def test_a_missing_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(FORMATS / "no-such-template.jinja")]) == 2
    err = capsys.readouterr().err
    assert "no-such-template.jinja" in err and "cannot read the file" in err


def test_the_report_says_how_the_template_was_rendered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(FORMATS / "plain.jinja")]) == 0
    assert "rendered: exactly as transformers does" in capsys.readouterr().out
    queue = tmp_path / "queue.jinja"
    queue.write_text("{% set q = namespace(ids=[]) %}{% for m in messages %}"
                     "{% set _ = q.ids.append(m.role) %}<{{ m.role }}>{{ m.content }}{% endfor %}")
    assert main(["analyze", str(queue)]) == 0
    out = capsys.readouterr().out
    assert "rendered: leniently: transformers refuses" in out
    assert "'append' of 'list' object is unsafe" in out


def test_a_syntax_error_exits_with_status_2(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% if %}")
    assert main(["analyze", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("error:")


def test_subcommands_are_discovered_from_cli_modules() -> None:
    assert "analyzer.cli.analyze" in subcommand_modules()


def test_the_module_runs_as_a_program() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "analyzer", "analyze", str(FORMATS / "plain.jinja"), "--json"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["handler"] == "auto"


@pytest.mark.skipif(not CORPUS_FILES, reason="../shared/corpus/templates is not present")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.stem)
def test_analyze_succeeds_on_every_corpus_template(path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(path), "--json"]) == 0
    printed = capsys.readouterr().out
    # A second, uncached analysis (fresh compile, every render again) gives the same bytes.
    source = TemplateSource(source=path.read_text(encoding="utf-8"))
    again = analyze_uncached(source)
    assert printed == analysis_to_json(again) + "\n"


def test_analyze_reads_the_template_from_standard_input() -> None:
    template = (FORMATS / "tools_tagged.jinja").read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "analyzer", "analyze", "-", "--json"],
                          input=template, capture_output=True, text=True, check=True, cwd=ROOT)
    assert analysis_from_json(done.stdout).tools.function.name_prefix == "<function="


def test_version_names_the_analyzer_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip().endswith(ANALYZER_VERSION)
