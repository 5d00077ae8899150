"""Stream parsers for tests of the skipped runs: one that never skips, one that counts."""

from __future__ import annotations

from typing import Any

from analyzer.parsing.stream import Delta, StreamParser


class AlwaysRuns(StreamParser):
    """A stream that never skips a run: what every skipped run must equal."""

    def _steady_of(self, *fields: Any) -> None:  # decided runs' answers too, not only _steady's
        return None


class CountsSkips(StreamParser):
    """A stream that counts the chunks it answered without running the grammar."""

    skipped = 0
    runs = 0

    def feed(self, chunk: str) -> list[Delta]:
        runs = self.runs
        deltas = super().feed(chunk)
        self.skipped += self.runs == runs
        return deltas

    def _advance(self, partial: bool) -> list[Delta]:
        self.runs += 1
        return super()._advance(partial)
