"""The dashboard's reads: a run's rows filtered and paged, and the values its filters offer.

Every read is a constant number of queries over CorpusResult columns (indexed with the run),
never one per template.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

from lab.corpus.models import SUMMARY_FIELDS, CorpusResult, CorpusRun

PAGE_SIZE = 50
# What a dashboard row shows; the big text columns (verification JSON) stay in the database.
# The dashboard's row: every summary column but the two it never shows, plus the keys.
ROW_FIELDS = (
    "id",
    "run_id",
    *(f for f in SUMMARY_FIELDS if f not in ("analyzer_version", "markers_json")),
)
FILTERS = ("format", "reasoning", "round_trip", "grammar", "status")
VERDICTS = ("pass", "fail", "skip")


@dataclass(frozen=True)
class Filters:
    """What the dashboard's filter form asks for ("" = any)."""

    q: str = ""
    format: str = ""
    reasoning: str = ""
    round_trip: str = ""
    grammar: str = ""
    status: str = ""

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> Filters:
        return cls(**{name: params.get(name, "").strip()[:200] for name in ("q", *FILTERS)})

    @property
    def active(self) -> bool:
        return any(vars(self).values())

    def query_string(self) -> str:
        """The filters as URL parameters (for pagination links)."""
        from urllib.parse import urlencode

        return urlencode({k: v for k, v in vars(self).items() if v})


def latest_run() -> CorpusRun | None:
    """The newest run, finished or not."""
    return CorpusRun.objects.order_by("-pk").first()


def filtered_rows(run: CorpusRun, filters: Filters) -> QuerySet[CorpusResult]:
    """A run's result rows narrowed by the filters, sorted by name."""
    rows = CorpusResult.objects.filter(run=run).only(*ROW_FIELDS).order_by("name")
    columns = {
        "format": "tool_format",
        "reasoning": "reasoning_mode",
        "round_trip": "round_trip",
        "grammar": "grammar",
        "status": "status",
    }
    narrowed = {columns[name]: getattr(filters, name) for name in FILTERS if getattr(filters, name)}
    rows = rows.filter(**narrowed)
    if filters.q:
        rows = rows.filter(name__icontains=filters.q)
    return rows


def page_of(
    rows: QuerySet[Any] | list[Any], number: str | None, size: int = PAGE_SIZE
) -> Page[Any]:
    """The requested page (the last one when the number is past the end)."""
    return Paginator(rows, size).get_page(number)


def choices(run: CorpusRun, column: str) -> list[str]:
    """The distinct values a column takes in a run (one indexed query)."""
    values = CorpusResult.objects.filter(run=run).values_list(column, flat=True)
    return sorted(v for v in values.distinct().order_by() if v)


def completed(run: CorpusRun) -> int:
    """How many templates of the run have a stored result."""
    return CorpusResult.objects.filter(run=run).count()
