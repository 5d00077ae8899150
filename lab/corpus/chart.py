"""Pass rates across runs, and the inline SVG chart the dashboard draws them in (no JS)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from lab.corpus.models import CorpusResult, CorpusRun

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
    """The pass rates of the newest finished runs, oldest first (one query)."""
    run_ids = (
        CorpusRun.objects.filter(status=CorpusRun.Status.DONE).order_by("-pk").values("pk")[:limit]
    )
    counts = (
        CorpusResult.objects.filter(run_id__in=run_ids)
        .values("run_id")
        .annotate(
            rt_pass=Count("pk", filter=Q(round_trip="pass")),
            rt_seen=Count("pk", filter=Q(round_trip__in=("pass", "fail"))),
            gr_pass=Count("pk", filter=Q(grammar="pass")),
            gr_seen=Count("pk", filter=Q(grammar__in=("pass", "fail"))),
        )
        .order_by("run_id")
    )
    return [
        RunRates(row["run_id"], _share(row["rt_pass"], row["rt_seen"]),
                 _share(row["gr_pass"], row["gr_seen"]))
        for row in counts
    ]


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
