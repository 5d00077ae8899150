"""`pip install .` gives a `template-lab` command with the analyzer's subcommands and its data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ROOT / "templates_corpus" / "formats"
SCRIPT = Path(sys.executable).parent / "template-lab"


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    if not SCRIPT.is_file():
        pytest.skip(f"{SCRIPT} is not installed: run bin/setup (pip install -e .)")
    return subprocess.run([str(SCRIPT), *args], input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_console_script_prints_its_version() -> None:
    from analyzer.version import ANALYZER_VERSION

    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"template-lab {ANALYZER_VERSION}"


def test_the_console_script_has_the_same_subcommands_as_python_m_analyzer() -> None:
    ours = run("--help").stdout
    theirs = subprocess.run([sys.executable, "-m", "analyzer", "--help"], capture_output=True,
                            text=True, check=True).stdout
    for command in ("analyze", "parse", "render", "compare", "serve-flags", "verify", "check"):
        assert command in ours
    assert ours.replace("template-lab", "python -m analyzer") == theirs


def test_analyze_dash_reads_the_template_from_standard_input() -> None:
    done = run("analyze", "-", "--json", stdin=(FORMATS / "tools_tagged.jinja").read_text())
    assert done.returncode == 0 and '"name_prefix":"<function="' in done.stdout


TOOLS = ('[{"type": "function", "function": {"name": "get_weather", '
         '"parameters": {"type": "object"}}}]')


@pytest.mark.parametrize(("command", "expected"), [
    pytest.param(["grammar", "--tools", "{tools}"], "root ::=", id="grammar"),
    pytest.param(["parse", "--input", "{output}"], '"content": "Hello there"', id="parse"),
    pytest.param(["verify", "--json"], '"round_trip":"pass"', id="verify"),
])
def test_the_other_file_subcommands_read_the_template_from_standard_input(
    tmp_path: Path, command: list[str], expected: str
) -> None:
    (tmp_path / "tools.json").write_text(TOOLS)
    (tmp_path / "output.txt").write_text("Hello there")
    args = [arg.format(tools=tmp_path / "tools.json", output=tmp_path / "output.txt")
            for arg in command]
    done = run(args[0], "-", *args[1:], stdin=(FORMATS / "tools_tagged.jinja").read_text())
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout


def test_parse_refuses_to_read_both_the_template_and_the_output_from_standard_input() -> None:
    done = run("parse", "-", "--input", "-", stdin="{{ messages }}")
    assert done.returncode == 2
    assert "FILE and --input cannot both be -" in done.stderr


def test_the_wheel_carries_the_command_and_the_engines_data(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for package in ("analyzer", "lab"):
        shutil.copytree(ROOT / package, source / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(source)], check=True,
                   capture_output=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("template_lab-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "template-lab = analyzer.cli.main:main" in archive.read(entry_points).decode()
        assert "analyzer/data/engines.json" in names
