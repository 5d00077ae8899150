"""Corpus pages: the dashboard of a run, the run history, a diff of two runs, one result.

While a run is in progress its dashboard hears the progress over a websocket
(lab.corpus.progress); when the run closes, the page reloads to show the final table. Each page
has a JSON twin under /corpus/api/.
"""

from __future__ import annotations

import csv
import json
from typing import Any

from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from lab.corpus import chart, launch, payloads, queries, recovery
from lab.corpus.diffs import RunDiff, diff_runs, visible
from lab.corpus.models import CorpusResult, CorpusRun


def dashboard_context(request: HttpRequest, run: CorpusRun | None) -> dict[str, Any]:
    """Everything the dashboard shows for a run (a constant number of queries)."""
    context: dict[str, Any] = {"run": run, "latest": queries.latest_run()}
    if run is None:
        return context
    filters = queries.Filters.from_query(request.GET)
    page = queries.page_of(queries.filtered_rows(run, filters), request.GET.get("page"))
    context.update(
        filters=filters,
        page=page,
        # Unfiltered, the pager has counted the run's rows already.
        completed=queries.completed(run) if filters.active else page.paginator.count,
        formats=queries.choices(run, "tool_format"),
        reasoning_modes=queries.choices(run, "reasoning_mode"),
        verdicts=queries.VERDICTS,
        headers=queries.sort_headers(filters),
        chart=chart.chart_series(chart.run_rates()),
        chart_size=(chart.WIDTH, chart.HEIGHT),
    )
    return context


@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    """Show the newest run."""
    context = dashboard_context(request, queries.latest_run())
    return render(request, "corpus/dashboard.html", context)


@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show one run."""
    run = get_object_or_404(CorpusRun, pk=pk)
    return render(request, "corpus/dashboard.html", dashboard_context(request, run))


@require_POST
def start_run(request: HttpRequest) -> HttpResponse:
    """Start a run over every active template (the dashboard's button)."""
    with transaction.atomic():
        run = launch.start_run("dashboard")
    return redirect(run)


@require_POST
def cancel_run(request: HttpRequest, pk: int) -> HttpResponse:
    """Close a pending run now: its missing templates fail as cancelled."""
    run = get_object_or_404(CorpusRun, pk=pk)
    recovery.cancel_run(run.pk)
    return redirect(run)


@require_GET
def run_history(request: HttpRequest) -> HttpResponse:
    """List runs, newest first, with their verdicts."""
    page = queries.page_of(CorpusRun.objects.order_by("-pk"), request.GET.get("page"), 25)
    return render(request, "corpus/runs.html", {"page": page})


def runs_to_compare(request: HttpRequest) -> tuple[CorpusRun, CorpusRun]:
    """Read ?base=&head= (head defaults to the newest run, base to head's baseline)."""
    try:
        head_id = int(request.GET.get("head") or 0)
        base_id = int(request.GET.get("base") or 0)
    except ValueError as exc:
        raise Http404("base and head must be run numbers") from exc
    head = get_object_or_404(CorpusRun, pk=head_id) if head_id else queries.latest_run()
    if head is None:
        raise Http404("there is no run yet")
    base = get_object_or_404(CorpusRun, pk=base_id) if base_id else head.baseline
    if base is None:
        raise Http404(f"run {head.pk} has no earlier finished run to compare with")
    return base, head


@require_GET
def diff_view(request: HttpRequest) -> HttpResponse:
    """Show what changed between two runs, regressions first."""
    diff: RunDiff = diff_runs(*runs_to_compare(request))
    context = {
        "diff": diff,
        "page": queries.page_of(list(diff.templates), request.GET.get("page")),
        "diff_query": f"base={diff.base.pk}&head={diff.head.pk}",
    }
    return render(request, "corpus/diff.html", context)


@require_GET
def result_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show one template's result in a run, with every verification case."""
    result = get_object_or_404(CorpusResult.objects.select_related("run"), pk=pk)
    verification = json.loads(result.verification_json) if result.verification_json else None
    context = {
        "result": result,
        "verification": verification,
        "markers": sorted((role, visible(text)) for role, text in result.markers.items()),
    }
    return render(request, "corpus/result.html", context)


# The CSV export's columns, in order (the dashboard's row plus the counts behind it).
CSV_FIELDS = (
    "name", "status", "tool_format", "reasoning_mode", "content_mode", "key_markers",
    "round_trip", "cases_passed", "cases_failed", "cases_skipped", "cases_total",
    "failed_cases", "grammar", "vectors_passed", "vectors_total", "analysis_ms", "verify_ms",
    "template_sha256", "analysis_id", "error",
)
# A spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


@require_GET
def export_csv(request: HttpRequest, pk: int) -> HttpResponse:
    """Download a run's rows, filtered and sorted as on the dashboard, as CSV."""
    run = get_object_or_404(CorpusRun, pk=pk)
    rows = queries.filtered_rows(run, queries.Filters.from_query(request.GET))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="corpus-run-{run.pk}.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_FIELDS)
    for row in rows:
        writer.writerow([_csv_cell(getattr(row, name)) for name in CSV_FIELDS])
    return response


def _csv_cell(value: Any) -> Any:
    """Keep a text cell from being read as a formula (names and errors come from templates)."""
    if isinstance(value, str) and value.startswith(FORMULA_LEADS):
        return "'" + value
    return "" if value is None else value


@require_GET
def api_run(request: HttpRequest, pk: int) -> JsonResponse:
    """Return a run and one page of its rows as JSON."""
    return JsonResponse(payloads.run_payload(get_object_or_404(CorpusRun, pk=pk), request))


@require_GET
def api_latest_run(request: HttpRequest) -> JsonResponse:
    """Return the newest finished run as JSON."""
    run = CorpusRun.objects.filter(status=CorpusRun.Status.DONE).order_by("-pk").first()
    if run is None:
        raise Http404("no finished run yet")
    return JsonResponse(payloads.run_payload(run, request))


@require_GET
def api_diff(request: HttpRequest) -> JsonResponse:
    """Return the diff of two runs as JSON ("worse": true when any template got worse)."""
    diff = diff_runs(*runs_to_compare(request))
    return JsonResponse(payloads.diff_payload(diff, request))
