"""JSON for scripts and CI: a run with its rows, and a diff of two runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.core.paginator import Page, Paginator
from django.http import HttpRequest
from django.urls import reverse

from lab.corpus.diffs import RunDiff, TemplateDiff
from lab.corpus.models import SUMMARY_FIELDS, CorpusResult, CorpusRun


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def absolute(request: HttpRequest, name: str, *args: Any) -> str:
    return request.build_absolute_uri(reverse(name, args=args))


def run_summary(run: CorpusRun, request: HttpRequest, completed: int) -> dict[str, Any]:
    """Describe a run without its rows."""
    baseline = run.baseline_id
    return {
        "id": run.pk,
        "url": request.build_absolute_uri(run.get_absolute_url()),
        "status": run.status,
        "analyzer_version": run.analyzer_version,
        "total": run.total,
        "completed": completed,
        "created_at": _iso(run.created_at),
        "started_at": _iso(run.started_at),
        "finished_at": _iso(run.finished_at),
        "errors": run.errors,
        "round_trip_failed": run.round_trip_failed,
        "grammar_failed": run.grammar_failed,
        "baseline": baseline,
        "regressions": run.regressions,
        "improvements": run.improvements,
        "changed": run.changed,
        "worse": run.is_worse,
        "diff_url": (
            request.build_absolute_uri(
                reverse("corpus-api-diff") + f"?base={baseline}&head={run.pk}"
            )
            if baseline
            else None
        ),
    }


def row_payload(row: Mapping[str, Any], request: HttpRequest) -> dict[str, Any]:
    """Describe one template's result, with links to its analysis and template pages."""
    payload = {field: row[field] for field in SUMMARY_FIELDS if field != "markers_json"}
    payload["markers"] = json.loads(row["markers_json"] or "{}")
    analysis = row["analysis_id"]
    payload["analysis_url"] = absolute(request, "analysis-detail", analysis) if analysis else None
    payload["template_url"] = absolute(request, "template-detail", row["template_sha256"])
    return payload


ROWS_PER_PAGE = 100
MAX_ROWS_PER_PAGE = 500


def run_payload(run: CorpusRun, request: HttpRequest) -> dict[str, Any]:
    """Describe a run and one page of its rows (?page=N&per_page=M, 100 rows by default)."""
    rows = CorpusResult.objects.filter(run=run).order_by("name").values(*SUMMARY_FIELDS)
    page = Paginator(rows, rows_per_page(request)).get_page(request.GET.get("page"))
    payload = run_summary(run, request, page.paginator.count)
    payload["results"] = [row_payload(row, request) for row in page]
    payload["page"] = page_links(page, request)
    return payload


def rows_per_page(request: HttpRequest) -> int:
    """The page size asked for, within 1..MAX_ROWS_PER_PAGE (the default when unreadable)."""
    try:
        asked = int(request.GET.get("per_page", ROWS_PER_PAGE))
    except ValueError:
        return ROWS_PER_PAGE
    return max(1, min(asked, MAX_ROWS_PER_PAGE))


def page_links(page: Page[Any], request: HttpRequest) -> dict[str, Any]:
    """Where this page sits among the run's rows, with the URLs of its neighbours."""

    def url(number: int) -> str:
        query = request.GET.copy()
        query["page"] = str(number)
        return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")

    return {
        "number": page.number,
        "pages": page.paginator.num_pages,
        "per_page": page.paginator.per_page,
        "count": page.paginator.count,
        "next": url(page.next_page_number()) if page.has_next() else None,
        "previous": url(page.previous_page_number()) if page.has_previous() else None,
    }


def template_diff_payload(diff: TemplateDiff, request: HttpRequest) -> dict[str, Any]:
    """Describe one changed template: its changes and both analyses' links."""

    def link(row: Mapping[str, Any] | None) -> str | None:
        if row is None or not row["analysis_id"]:
            return None
        return absolute(request, "analysis-detail", row["analysis_id"])

    return {
        "name": diff.name,
        "worse": diff.worse,
        "better": diff.better,
        "changes": [vars(change) for change in diff.changes],
        "base_analysis_url": link(diff.base),
        "head_analysis_url": link(diff.head),
    }


def diff_payload(diff: RunDiff, request: HttpRequest) -> dict[str, Any]:
    """Describe a diff: the verdict first (CI reads "worse"), then one page of the changed
    templates, worse first (?page=N&per_page=M, 100 by default)."""
    page = Paginator(diff.templates, rows_per_page(request)).get_page(request.GET.get("page"))
    return {
        "base": run_summary(diff.base, request, diff.base.total),
        "head": run_summary(diff.head, request, diff.head.total),
        "compared": diff.compared,
        "worse": bool(diff.regressions),
        "regressions": len(diff.regressions),
        "improvements": len(diff.improvements),
        "changed": len(diff.templates),
        "templates": [template_diff_payload(t, request) for t in page],
        "page": page_links(page, request),
    }
