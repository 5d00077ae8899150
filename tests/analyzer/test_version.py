"""ANALYZER_VERSION: package version plus a hash of the analyzer's own source files."""

from __future__ import annotations

from pathlib import Path

from analyzer.version import ANALYZER_VERSION, package_version, source_hash


def test_the_version_is_package_version_plus_a_source_hash() -> None:
    version, _, digest = ANALYZER_VERSION.partition("+")
    assert version == package_version()
    assert len(digest) == 10 and int(digest, 16) >= 0


def test_any_source_change_changes_the_hash(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    before = source_hash(tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert source_hash(tmp_path) != before


def test_line_endings_do_not_change_the_hash(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = 1\n")
    unix = source_hash(tmp_path)
    (tmp_path / "a.py").write_bytes(b"x = 1\r\n")
    assert source_hash(tmp_path) == unix
