"""Stream parsers for tests of the skipped runs: one that never skips, one that counts."""

from __future__ import annotations

from typing import Any

from analyzer.parsing.stream import Delta, StreamParser


class AlwaysRuns(StreamParser):
    """A stream that never skips a run: what every skipped run must equal."""

    def _steady(self, state: Any) -> None:
        return None


class CountsSkips(StreamParser):
    """A stream that counts the chunks it answered without running the grammar."""

    skipped = 0

    def _quiet(self, end: int) -> list[Delta]:
        self.skipped += 1
        return super()._quiet(end)

    def _read_on(self, quiet: Any, buffer: str) -> list[Delta] | None:
        deltas = super()._read_on(quiet, buffer)
        self.skipped += deltas is not None
        return deltas
