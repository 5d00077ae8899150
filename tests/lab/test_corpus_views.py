"""Corpus pages and JSON through Django's test client, on rows written directly."""

from __future__ import annotations

import csv
import hashlib
import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from lab.analyses.models import Template
from lab.corpus import queries, runs
from lab.corpus.models import CorpusResult, CorpusRun, CorpusTemplate

pytestmark = pytest.mark.django_db


def make_entries(count: int, prefix: str = "tpl") -> list[CorpusTemplate]:
    templates = Template.objects.bulk_create(
        [
            Template(sha256=hashlib.sha256(f"{prefix}{i}".encode()).hexdigest(), source=f"{i}")
            for i in range(count)
        ]
    )
    return CorpusTemplate.objects.bulk_create(
        [
            CorpusTemplate(name=f"{prefix}-{i:03d}", template=t, source="import")
            for i, t in enumerate(templates)
        ]
    )


def make_run(entries: list[CorpusTemplate], **overrides: Any) -> CorpusRun:
    """A finished run whose rows pass everything, except the fields overridden by name."""
    run = CorpusRun.objects.create(
        analyzer_version="0.1.0+test", total=len(entries), started_at=timezone.now()
    )
    rows = []
    for entry in entries:
        fields: dict[str, Any] = {
            "status": "done",
            "tool_format": "JSON_NATIVE",
            "reasoning_mode": "NONE",
            "content_mode": "PLAIN",
            "key_markers": "<tool_call> </tool_call>",
            "markers_json": json.dumps({"tools.format.section_start": "<tool_call>"}),
            "round_trip": "pass",
            "cases_passed": 6,
            "cases_total": 6,
            "grammar": "pass",
            "vectors_total": 2,
            "vectors_passed": 2,
            "analysis_ms": 12.5,
            "verify_ms": 30.0,
        }
        fields.update(overrides.get(entry.name, {}))
        rows.append(
            CorpusResult(
                run=run,
                entry=entry,
                name=entry.name,
                template_sha256=entry.template.sha256,
                analyzer_version=run.analyzer_version,
                **fields,
            )
        )
    CorpusResult.objects.bulk_create(rows)
    closed = runs.close_run(run.pk)
    assert closed is not None
    return closed


def test_the_dashboard_without_runs_says_how_to_start(client: Client) -> None:
    page = client.get("/corpus/").content.decode()
    assert "No corpus run yet" in page
    assert 'id="start-run"' in page and "csrfmiddlewaretoken" in page


def test_the_dashboard_shows_one_row_per_template_of_the_newest_run(client: Client) -> None:
    entries = make_entries(3)
    make_run(entries)
    newest = make_run(entries, **{"tpl-001": {"tool_format": "TAG_WITH_TAGGED",
                                              "robustness_passed": 3, "robustness_total": 11}})
    page = client.get("/corpus/").content.decode()
    assert f"Template corpus · run {newest.pk}" in page
    # A sortable column head; the cell's count carries what it counts as its tooltip.
    assert ">Robustness</a></th>" in page
    assert 'expected message and deviation">3/11</span>' in page
    assert page.count('data-name="tpl-') == 3
    assert "<td>TAG_WITH_TAGGED</td>" in page
    assert f'href="/corpus/results/{newest.results.get(name="tpl-001").pk}/"' in page


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("format=TAG_WITH_TAGGED", ["tpl-001"]),
        ("round_trip=fail", ["tpl-002"]),
        ("grammar=skip", ["tpl-000"]),
        ("q=002", ["tpl-002"]),
        ("status=error", []),
    ],
)
def test_filters_and_search_narrow_the_rows(client: Client, query: str, names: list[str]) -> None:
    make_run(
        make_entries(3),
        **{
            "tpl-000": {"grammar": "skip"},
            "tpl-001": {"tool_format": "TAG_WITH_TAGGED"},
            "tpl-002": {"round_trip": "fail", "cases_failed": 2},
        },
    )
    page = client.get(f"/corpus/?{query}").content.decode()
    shown = [n for n in ("tpl-000", "tpl-001", "tpl-002") if f'data-name="{n}"' in page]
    assert shown == names


def test_rows_are_paged_and_page_links_keep_the_filters(client: Client) -> None:
    make_run(make_entries(queries.PAGE_SIZE + 5))
    first = client.get("/corpus/?grammar=pass").content.decode()
    assert first.count('data-name="tpl-') == queries.PAGE_SIZE
    assert 'href="?grammar=pass&amp;page=2"' in first
    second = client.get("/corpus/?grammar=pass&page=2").content.decode()
    assert second.count('data-name="tpl-') == 5
    assert 'data-name="tpl-054"' in second


def test_the_dashboard_costs_the_same_queries_for_ten_or_a_hundred_templates(
    client: Client,
) -> None:
    counts = []
    for size, prefix in ((10, "small"), (100, "large")):
        make_run(make_entries(size, prefix))
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/corpus/").status_code == 200
        counts.append(len(captured.captured_queries))
    assert counts[0] == counts[1] <= 8


PAGES = (
    "/corpus/",
    "/corpus/?page=2&sort=-analysis",
    "/corpus/runs/",
    "/corpus/runs/{head}/",
    "/corpus/diff/?base={base}&head={head}",
    "/corpus/results/{result}/",
    "/corpus/api/runs/{head}/",
    "/corpus/api/runs/latest/",
    "/corpus/api/diff/?base={base}&head={head}",
)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_costs_the_same_queries_at_ten_or_fifty_templates(
    client: Client, page: str
) -> None:
    counts = []
    for size, prefix in ((10, "small"), (50, "large")):
        entries = make_entries(size, prefix)
        base = make_run(entries)
        # Half the templates got worse: the diff grows with the corpus, its queries must not.
        worse = {entry.name: {"grammar": "fail"} for entry in entries[: size // 2]}
        head = make_run(entries, **worse)
        result = head.results.order_by("pk").first()
        assert result is not None
        path = page.format(base=base.pk, head=head.pk, result=result.pk)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path).status_code == 200
        counts.append(len(captured.captured_queries))
    assert counts[0] == counts[1], f"{page}: {counts[0]} queries at 10, {counts[1]} at 50"


def test_a_worse_run_is_marked_red_at_the_top_with_a_link_to_the_diff(client: Client) -> None:
    entries = make_entries(2)
    base = make_run(entries)
    head = make_run(entries, **{"tpl-000": {"grammar": "fail"}})
    page = client.get(head.get_absolute_url()).content.decode()
    assert 'class="panel verdict worse" id="run-verdict"' in page
    assert f"<strong>Run {head.pk} made 1 template worse</strong>" in page
    assert f'href="/corpus/diff/?base={base.pk}&amp;head={head.pk}"' in page


def test_an_older_run_page_points_to_the_newest(client: Client) -> None:
    entries = make_entries(1)
    older, newest = make_run(entries), make_run(entries)
    page = client.get(older.get_absolute_url()).content.decode()
    assert f'the newest is <a href="/corpus/runs/{newest.pk}/">run {newest.pk}</a>' in page


def test_a_pending_run_listens_for_its_progress_instead_of_polling(client: Client) -> None:
    run = CorpusRun.objects.create(analyzer_version="x", total=1, status="running")
    page = client.get(run.get_absolute_url()).content.decode()
    assert f'data-progress-socket="/ws/corpus/runs/{run.pk}/progress/"' in page
    assert "corpus_progress.js" in page and "hx-trigger" not in page
    runs.close_run(run.pk)
    closed = client.get(run.get_absolute_url()).content.decode()
    assert "data-progress-socket" not in closed and "corpus_progress.js" not in closed


def test_the_button_starts_a_run_and_shows_it(
    client: Client, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    make_entries(1)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post("/corpus/runs/new/")
    run = CorpusRun.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert (run.trigger, run.total, run.status) == ("dashboard", 1, "queued")


def test_the_button_needs_the_csrf_token() -> None:
    assert Client(enforce_csrf_checks=True).post("/corpus/runs/new/").status_code == 403


def test_the_run_history_lists_runs_and_marks_worse_ones(client: Client) -> None:
    entries = make_entries(2)
    base = make_run(entries)
    head = make_run(entries, **{"tpl-001": {"status": "error", "error": "boom"}})
    page = client.get("/corpus/runs/").content.decode()
    assert f'<tr class="worse" data-run="{head.pk}">' in page
    assert f'<tr class="" data-run="{base.pk}">' in page
    assert '<strong class="bad">1 worse</strong>' in page


def test_the_diff_lists_worse_templates_first_with_both_analyses(client: Client) -> None:
    entries = make_entries(3)
    base = make_run(
        entries, **{"tpl-002": {"round_trip": "fail", "cases_failed": 1, "cases_passed": 5}}
    )
    head = make_run(
        entries,
        **{
            "tpl-001": {"vectors_passed": 1},
            "tpl-002": {"markers_json": json.dumps({"tools.format.section_start": "<calls>"})},
        },
    )
    page = client.get(f"/corpus/diff/?base={base.pk}&head={head.pk}").content.decode()
    assert "<strong>1 template got worse</strong>" in page
    assert page.index('data-name="tpl-001"') < page.index('data-name="tpl-002"')
    assert "<th>vectors</th><td><code>2/2</code></td><td><code>1/2</code></td>" in page
    assert (
        "<th>tools.format.section_start</th><td><code>&lt;tool_call&gt;</code></td>"
        "<td><code>&lt;calls&gt;</code></td>"
    ) in page
    assert 'data-name="tpl-000"' not in page  # unchanged


def test_the_diff_without_parameters_compares_the_newest_run_with_its_baseline(
    client: Client,
) -> None:
    entries = make_entries(1)
    base, head = make_run(entries), make_run(entries)
    page = client.get("/corpus/diff/").content.decode()
    assert f"<h1>Run {base.pk} → run {head.pk}</h1>" in page
    assert "No template got worse." in page


def test_the_diff_refuses_a_run_that_has_nothing_to_compare_with(client: Client) -> None:
    make_run(make_entries(1))
    assert client.get("/corpus/diff/").status_code == 404
    assert client.get("/corpus/diff/?base=x&head=1").status_code == 404


def test_the_result_page_shows_cases_with_their_differences(client: Client) -> None:
    entry = make_entries(1)[0]
    verification = {
        "cases": [
            {
                "case": "call",
                "outcome": "fail",
                "enable_thinking": None,
                "output": "<call>x</call>",
                "note": "",
                "differences": ["content: expected '', actual '<call>'"],
                "expected": {},
                "actual": {},
                "grammar": {"outcome": "pass", "mode": "required", "detail": "accepted"},
            }
        ]
    }
    run = make_run([entry], **{entry.name: {"verification_json": json.dumps(verification),
                                            "robustness_passed": 4, "robustness_total": 9}})
    page = client.get(f"/corpus/results/{run.results.get().pk}/").content.decode()
    assert "4/9 perturbation cases give the expected message and deviation" in page
    assert 'id="case-call"' in page
    assert "content: expected &#x27;&#x27;, actual &#x27;&lt;call&gt;&#x27;" in page


def test_markers_and_names_are_escaped(client: Client) -> None:
    entry = make_entries(1, prefix="<script>alert(1)</script>")[0]
    make_run([entry], **{entry.name: {"key_markers": "<img src=x onerror=alert(1)>"}})
    page = client.get("/corpus/").content.decode()
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    # Markers are shown one token per chip (never wrapped inside one), each escaped.
    assert "&lt;img</code>" in page and "onerror=alert(1)&gt;</code>" in page


# --- JSON ------------------------------------------------------------------------------------


def test_the_run_json_has_every_row_with_links(client: Client) -> None:
    run = make_run(make_entries(2))
    data = client.get(f"/corpus/api/runs/{run.pk}/").json()
    assert (data["id"], data["status"], data["completed"], data["worse"]) == (
        run.pk,
        "done",
        2,
        False,
    )
    first = data["results"][0]
    assert first["name"] == "tpl-000"
    assert first["markers"] == {"tools.format.section_start": "<tool_call>"}
    assert first["template_url"].endswith(f"/t/{first['template_sha256']}/")
    assert client.get("/corpus/api/runs/latest/").json()["id"] == run.pk


def test_the_run_json_pages_its_rows(client: Client) -> None:
    run = make_run(make_entries(5))
    first = client.get(f"/corpus/api/runs/{run.pk}/?per_page=2").json()
    assert [row["name"] for row in first["results"]] == ["tpl-000", "tpl-001"]
    assert first["completed"] == 5
    assert {k: first["page"][k] for k in ("number", "pages", "per_page", "count")} == {
        "number": 1,
        "pages": 3,
        "per_page": 2,
        "count": 5,
    }
    assert first["page"]["previous"] is None
    assert first["page"]["next"].endswith(f"/corpus/api/runs/{run.pk}/?per_page=2&page=2")
    last = client.get(f"/corpus/api/runs/{run.pk}/?per_page=2&page=3").json()
    assert [row["name"] for row in last["results"]] == ["tpl-004"]
    assert last["page"]["next"] is None and last["page"]["previous"].endswith("&page=2")
    capped = client.get(f"/corpus/api/runs/{run.pk}/?per_page=100000").json()
    assert capped["page"]["per_page"] == 500


def test_the_diff_json_says_worse_for_ci(client: Client) -> None:
    entries = make_entries(2)
    base = make_run(entries)
    head = make_run(entries, **{"tpl-000": {"tool_format": "NONE"}})
    data = client.get(f"/corpus/api/diff/?base={base.pk}&head={head.pk}").json()
    assert (data["worse"], data["regressions"], data["changed"]) == (True, 1, 1)
    (template,) = data["templates"]
    assert template["name"] == "tpl-000" and template["worse"]
    assert template["changes"] == [
        {
            "field": "tool_format",
            "before": "JSON_NATIVE",
            "after": "NONE",
            "worse": True,
            "better": False,
        }
    ]
    assert data["head"]["diff_url"].endswith(f"/corpus/api/diff/?base={base.pk}&head={head.pk}")


def test_the_diff_json_pages_its_templates_worse_first(client: Client) -> None:
    entries = make_entries(5)
    base = make_run(entries)
    changed = {"tpl-000": {"content_mode": "NONE"}, "tpl-003": {"grammar": "fail"},
               "tpl-004": {"content_mode": "NONE"}}
    head = make_run(entries, **changed)
    path = f"/corpus/api/diff/?base={base.pk}&head={head.pk}&per_page=2"
    first = client.get(path).json()
    assert (first["changed"], first["regressions"]) == (3, 1)
    assert [t["name"] for t in first["templates"]] == ["tpl-003", "tpl-000"]
    assert (first["page"]["pages"], first["page"]["count"]) == (2, 3)
    second = client.get(first["page"]["next"]).json()
    assert [t["name"] for t in second["templates"]] == ["tpl-004"]
    assert second["page"]["next"] is None


def test_the_diff_lists_templates_missing_from_either_run_and_counts_both(
    client: Client,
) -> None:
    entries = make_entries(4)
    base = make_run(entries[:3])
    head = make_run(entries[1:], **{"tpl-002": {"grammar": "fail"}})
    data = client.get(f"/corpus/api/diff/?base={base.pk}&head={head.pk}").json()
    assert data["compared"] == 4
    changes = {t["name"]: t["changes"][0] for t in data["templates"]}
    assert sorted(changes) == ["tpl-000", "tpl-002", "tpl-003"]  # tpl-001 is unchanged
    assert (changes["tpl-000"]["before"], changes["tpl-000"]["after"]) == ("present", "absent")
    assert (changes["tpl-003"]["before"], changes["tpl-003"]["after"]) == ("absent", "present")
    assert changes["tpl-002"]["field"] == "grammar" and changes["tpl-002"]["worse"]


def test_latest_run_json_is_404_before_any_run_finished(client: Client) -> None:
    assert client.get("/corpus/api/runs/latest/").status_code == 404


def test_a_run_that_cannot_reach_the_broker_fails_with_the_reason(
    client: Client, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from lab import celery_app

    make_entries(1)
    # Drop every cached way to the configured broker: the connection pool (close) and the
    # producer pool that earlier tests' sends left on app.amqp, which close() keeps.
    celery_app.close()
    celery_app.amqp._producer_pool = None
    celery_app.conf.task_always_eager = False
    broker = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    celery_app.conf.broker_transport_options = {"max_retries": 0}
    try:
        with django_capture_on_commit_callbacks(execute=True):
            client.post("/corpus/runs/new/")
    finally:
        celery_app.conf.broker_url = broker
        celery_app.conf.task_always_eager = True
        celery_app.close()
        celery_app.amqp._producer_pool = None
    run = CorpusRun.objects.get()
    assert run.status == "failed"
    assert run.note.startswith("could not queue the tasks (")
    page = client.get(run.get_absolute_url()).content.decode()
    assert 'id="run-note">could not queue the tasks (' in page


def test_skipped_cases_are_counted_and_not_shown_as_a_clean_pass(client: Client) -> None:
    entries = make_entries(2)
    make_run(entries, **{"tpl-001": {"cases_passed": 2, "cases_total": 9}})
    page = client.get("/corpus/").content.decode()

    def round_trip_cell(name: str) -> str:
        row = page.split(f'data-name="{name}"')[1]
        return row.split('class="round-trip"')[1].split("</td>")[0]

    assert 'class="verdict-partial"' in round_trip_cell("tpl-001")
    assert "7 skipped" in round_trip_cell("tpl-001")
    assert "verdict-pass" not in round_trip_cell("tpl-001")
    assert 'class="verdict-pass"' in round_trip_cell("tpl-000")
    assert "skipped" not in round_trip_cell("tpl-000")


def test_each_dash_says_why(client: Client) -> None:
    entries = make_entries(1)
    make_run(entries, **{"tpl-000": {"vectors_total": 0, "vectors_passed": 0, "grammar": ""}})
    page = client.get("/corpus/").content.decode()
    assert "— <small>no llama.cpp vectors for this template</small>" in page
    assert "— <small>not checked</small>" in page


@pytest.mark.parametrize(
    ("sort", "names"),
    [
        ("", ["tpl-000", "tpl-001", "tpl-002"]),
        ("-name", ["tpl-002", "tpl-001", "tpl-000"]),
        ("analysis", ["tpl-001", "tpl-002", "tpl-000"]),
        ("-analysis", ["tpl-000", "tpl-002", "tpl-001"]),
        ("bogus", ["tpl-000", "tpl-001", "tpl-002"]),
    ],
)
def test_columns_sort_both_ways(client: Client, sort: str, names: list[str]) -> None:
    times = {"tpl-000": 30.0, "tpl-001": 10.0, "tpl-002": 20.0}
    make_run(make_entries(3), **{name: {"analysis_ms": ms} for name, ms in times.items()})
    page = client.get("/corpus/", {"sort": sort}).content.decode()
    shown = [part.split('"')[0] for part in page.split('data-name="')[1:]]
    assert shown == names


def test_the_sorted_column_head_links_to_the_reverse_order_and_keeps_filters(
    client: Client,
) -> None:
    make_run(make_entries(2))
    page = client.get("/corpus/", {"sort": "analysis", "q": "tpl"}).content.decode()
    assert 'href="?q=tpl&amp;sort=-analysis">Analysis</a> <span class="arrow">▲</span>' in page
    assert 'href="?q=tpl&amp;sort=name">Template</a></th>' in page


def test_the_csv_export_has_every_filtered_row_and_defuses_formulas(client: Client) -> None:
    entries = make_entries(3)
    entries[2].name = "=HYPERLINK(evil)"
    entries[2].save()
    run = make_run(entries, **{"tpl-001": {"cases_passed": 2, "cases_total": 9}})
    response = client.get(f"/corpus/runs/{run.pk}/results.csv", {"sort": "-name"})
    assert response["Content-Type"].startswith("text/csv")
    assert f'filename="corpus-run-{run.pk}.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(response.content.decode().splitlines()))
    assert [r["name"] for r in rows] == ["tpl-001", "tpl-000", "'=HYPERLINK(evil)"]
    assert (rows[0]["cases_passed"], rows[0]["cases_skipped"], rows[0]["round_trip"]) == (
        "2",
        "7",
        "pass",
    )
    narrowed = client.get(f"/corpus/runs/{run.pk}/results.csv", {"q": "tpl-000"})
    assert len(narrowed.content.decode().strip().splitlines()) == 2


def test_the_dashboard_charts_pass_rates_of_finished_runs(client: Client) -> None:
    entries = make_entries(4)
    make_run(entries)
    make_run(entries, **{"tpl-000": {"round_trip": "fail"}, "tpl-001": {"round_trip": "skip"}})
    page = client.get("/corpus/").content.decode()
    chart = page.split('id="pass-chart"')[1].split("</figure>")[0]
    assert chart.count("<polyline") == 2
    assert ": 100%</title>" in chart and ": 67%</title>" in chart  # 2 of 3 checked pass
