"""Pass rates across runs, and the inline SVG chart the dashboard draws them in (no JS)."""

from __future__ import annotations

from dataclasses import dataclass

from lab.corpus.models import CorpusRun

WIDTH, HEIGHT, PAD = 360, 90, 6
HISTORY = 30  # runs the chart covers


@dataclass(frozen=True)
class RunRates:
    """One finished run: the share of templates whose round trip and grammar pass.

    Templates whose every case was skipped are left out of the share, not counted as a pass.
    """

    run_id: int
    round_trip: float | None
    grammar: float | None


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    label: str


@dataclass(frozen=True)
class Series:
    name: str
    points: tuple[Point, ...]

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


def run_rates(limit: int = HISTORY) -> list[RunRates]:
    """The pass rates of the newest finished runs, oldest first (one query over runs only)."""
    runs = CorpusRun.objects.filter(status=CorpusRun.Status.DONE).order_by("-pk")[:limit]
    return [
        RunRates(run.pk, _share(run.round_trip_passed, run.round_trip_checked),
                 _share(run.grammar_passed, run.grammar_checked))
        for run in reversed(runs.only(*RATE_FIELDS))
    ]


RATE_FIELDS = ("pk", "round_trip_passed", "round_trip_checked", "grammar_passed",
               "grammar_checked")


def _share(passed: int, seen: int) -> float | None:
    return passed / seen if seen else None


def chart_series(rates: list[RunRates]) -> list[Series]:
    """Place each run's rates on the chart: runs left to right, 0 % at the bottom."""
    step = (WIDTH - 2 * PAD) / max(len(rates) - 1, 1)
    series = []
    for name in ("round_trip", "grammar"):
        points = []
        for i, run in enumerate(rates):
            rate = getattr(run, name)
            if rate is None:
                continue
            y = HEIGHT - PAD - rate * (HEIGHT - 2 * PAD)
            points.append(Point(PAD + i * step, y, f"run {run.run_id}: {rate:.0%}"))
        series.append(Series(name.replace("_", " "), tuple(points)))
    return series
