"""The dashboard's reads: a run's rows filtered and paged, and the values its filters offer.

Every read is a constant number of queries over CorpusResult columns (indexed with the run),
never one per template.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
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
# The columns a dashboard header sorts by: ?sort=KEY ascending, ?sort=-KEY descending.
SORTS = {
    "name": "name",
    "format": "tool_format",
    "reasoning": "reasoning_mode",
    "content": "content_mode",
    "round_trip": "cases_passed",
    "grammar": "grammar",
    "vectors": "vectors_passed",
    "robustness": "robustness_passed",
    "analysis": "analysis_ms",
}


@dataclass(frozen=True)
class Filters:
    """What the dashboard's filter form asks for ("" = any)."""

    q: str = ""
    format: str = ""
    reasoning: str = ""
    round_trip: str = ""
    grammar: str = ""
    status: str = ""
    sort: str = ""  # a SORTS key, "-" in front for descending; anything else sorts by name

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> Filters:
        names = ("q", *FILTERS, "sort")
        return cls(**{name: params.get(name, "").strip()[:200] for name in names})

    @property
    def active(self) -> bool:
        return any(value for name, value in vars(self).items() if name != "sort")

    def ordering(self) -> tuple[str, ...]:
        """The ORM ordering the sort asks for; the name breaks ties."""
        column = SORTS.get(self.sort.removeprefix("-"))
        if column is None:
            return ("name",)
        return (("-" if self.sort.startswith("-") else "") + column, "name")

    def query_string(self) -> str:
        """The filters as URL parameters (for pagination links)."""
        from urllib.parse import urlencode

        return urlencode({k: v for k, v in vars(self).items() if v})


def latest_run() -> CorpusRun | None:
    """The newest run, finished or not."""
    return CorpusRun.objects.order_by("-pk").first()


def filtered_rows(run: CorpusRun, filters: Filters) -> QuerySet[CorpusResult]:
    """A run's result rows narrowed by the filters, in the order they ask (name by default)."""
    rows = CorpusResult.objects.filter(run=run).only(*ROW_FIELDS).order_by(*filters.ordering())
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


@dataclass(frozen=True)
class SortHeader:
    """One sortable column head: its label, the link that sorts by it, and its arrow."""

    label: str
    query: str
    arrow: str


COLUMNS = (
    ("Template", "name"),
    ("Tool format", "format"),
    ("Reasoning", "reasoning"),
    ("Content", "content"),
    ("Key markers", ""),
    ("Round trip", "round_trip"),
    ("Grammar", "grammar"),
    ("Vectors", "vectors"),
    ("Robustness", "robustness"),
    ("Analysis", "analysis"),
    ("Links", ""),
)


def sort_headers(filters: Filters) -> list[SortHeader]:
    """The dashboard's column heads; clicking the sorted one again reverses it."""
    heads = []
    for label, key in COLUMNS:
        if not key:
            heads.append(SortHeader(label, "", ""))
            continue
        current = filters.sort in (key, f"-{key}")
        flipped = f"-{key}" if filters.sort == key else key
        arrow = ("▼" if filters.sort.startswith("-") else "▲") if current else ""
        heads.append(SortHeader(label, replace(filters, sort=flipped).query_string(), arrow))
    return heads
