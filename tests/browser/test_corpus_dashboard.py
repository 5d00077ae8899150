"""The corpus dashboard and the diff view in Chromium, against the lab in its own processes.

A small corpus (five templates of ../shared/corpus) is imported into a fresh database; the
lab runs as under `bin/lab` (daphne, Celery workers, Valkey). Runs are started from the
dashboard's button or with `manage.py corpus run --wait`; one result is then deliberately
made worse, and the diff view must show it as a regression.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from page_layout import page_width  # tests/browser/page_layout.py
from playwright.sync_api import Browser, Page, expect

from lab.run import ROOT, free_port, migrate, start_valkey, start_web, start_worker, stop

ARTIFACTS = ROOT / "test-artifacts" / "corpus"
SMALL = (
    "Qwen3-Coder",
    "Qwen-Qwen3-0.6B",
    "meta-llama-Llama-3.1-8B-Instruct",
    "mistralai-Mistral-Nemo-Instruct-2407",
    "google-gemma-2-2b-it",
)
WORSENED = "Qwen3-Coder"


@dataclass(frozen=True)
class Stack:
    url: str
    env: dict[str, str]


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def stack(corpus_templates: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The lab on a fresh database holding the small corpus."""
    work = tmp_path_factory.mktemp("corpus-stack")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{work / 'lab.sqlite3'}"}
    migrate(env)
    folder = work / "templates"
    folder.mkdir()
    for name in SMALL:
        shutil.copy(corpus_templates / f"{name}.jinja", folder)
    manage(env, "corpus", "import", str(folder))
    processes = []
    try:
        valkey, env["REDIS_URL"] = start_valkey(work / "valkey", log=work / "valkey.log")
        processes.append(valkey)
        processes.append(start_worker(env, concurrency=2, log=work / "worker.log"))
        port = free_port()
        processes.append(start_web(env, "127.0.0.1", port, log=work / "web.log"))
        yield Stack(f"http://127.0.0.1:{port}", env)
    finally:
        stop(processes)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for log in work.glob("*.log"):
            shutil.copy(log, ARTIFACTS / log.name)


@pytest.fixture
def page(browser: Browser, stack: Stack) -> Iterator[Page]:
    """A page whose relative URLs reach the corpus stack."""
    context = browser.new_context(base_url=stack.url, viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


def shot(page: Page, name: str, selector: str = "") -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = str(ARTIFACTS / f"{name}.png")
    if selector:
        page.locator(selector).screenshot(path=path)
    else:
        page.screenshot(path=path, full_page=True)


def finished_runs(stack: Stack) -> list[int]:
    out = manage(
        stack.env,
        "shell",
        "--no-imports",
        "-c",
        "from lab.corpus.models import CorpusRun\n"
        "print('runs:', *CorpusRun.objects.filter(status='done').order_by('pk')"
        ".values_list('pk', flat=True))",
    )
    line = next(line for line in out.splitlines() if line.startswith("runs:"))
    return [int(pk) for pk in line.split()[1:]]


@pytest.fixture(scope="module")
def worsened(stack: Stack) -> tuple[int, int]:
    """Two finished runs, the newer with one result deliberately made worse."""
    while len(finished_runs(stack)) < 2:
        manage(stack.env, "corpus", "run", "--wait", "--timeout", "300")
    base, head = finished_runs(stack)[-2:]
    manage(
        stack.env,
        "shell",
        "--no-imports",
        "-c",
        "from lab.corpus.models import CorpusResult\n"
        "from lab.corpus.runs import close_run\n"
        f"CorpusResult.objects.filter(run_id={head}, name='{WORSENED}').update("
        "round_trip='fail', cases_passed=5, cases_failed=2, "
        "failed_cases='call-nested,parallel-calls', grammar='fail')\n"
        f"close_run({head})",
    )
    return base, head


def test_a_run_started_from_the_dashboard_fills_the_table_live(page: Page) -> None:
    sockets: list[str] = []
    requests: list[str] = []
    page.on("websocket", lambda socket: sockets.append(socket.url))
    page.on("request", lambda request: requests.append(request.url))
    page.goto("/corpus/")
    page.locator("#start-run").click()
    expect(page).to_have_url(re.compile(r"/corpus/runs/\d+/$"))
    expect(page.locator("#run-progress")).to_be_visible()
    # The workers' progress is pushed over a websocket; the page reloads once the run closes.
    expect(page.locator("#run-state")).to_have_text("done", timeout=180_000)
    expect(page.locator("#run-progress")).to_have_text(f"{len(SMALL)} / {len(SMALL)} templates")
    assert any(re.search(r"/ws/corpus/runs/\d+/progress/$", url) for url in sockets), sockets
    # Nothing was polled: only the pages themselves and their static files were fetched.
    fetched = [url for url in requests if "/static/" not in url]
    assert all(re.search(r"/corpus/(runs/(new/|\d+/))?$", url) for url in fetched), fetched
    rows = page.locator("#corpus-table tbody tr")
    expect(rows).to_have_count(len(SMALL))
    coder = page.locator(f'tr[data-name="{WORSENED}"]')
    expect(coder.locator("td").nth(1)).to_have_text("TAG_WITH_TAGGED")
    expect(coder.locator(".verdict-pass").first).to_have_text("pass")
    shot(page, "dashboard")

    page.locator("#filters input[name=q]").fill("qwen")
    page.locator("#apply-filters").click()
    expect(rows).to_have_count(2)
    page.locator("#filters select[name=format]").select_option("TAG_WITH_TAGGED")
    page.locator("#apply-filters").click()
    expect(rows).to_have_count(1)
    shot(page, "dashboard-filtered")

    coder.locator("a").first.click()
    expect(page.locator("h1")).to_have_text(WORSENED)
    expect(page.locator("#case-parallel-calls")).to_be_attached()
    shot(page, "result-qwen3-coder")


def test_a_deliberately_worsened_result_shows_as_a_regression(
    page: Page, worsened: tuple[int, int]
) -> None:
    base, head = worsened
    page.goto(f"/corpus/runs/{head}/")
    verdict = page.locator("#run-verdict")
    expect(verdict).to_have_class(re.compile(r"\bworse\b"))
    expect(verdict).to_contain_text(f"Run {head} made 1 template worse than run {base}")
    shot(page, "dashboard-regression", "#run-verdict")

    verdict.get_by_role("link", name="See what changed").click()
    expect(page).to_have_url(re.compile(rf"/corpus/diff/\?base={base}&head={head}$"))
    expect(page.locator("#diff-verdict")).to_contain_text("1 template got worse")
    section = page.locator(f'.template-diff[data-name="{WORSENED}"]')
    expect(section.locator(".tag-worse")).to_have_text("worse")
    round_trip = section.locator("tr", has=page.locator("th", has_text="round_trip"))
    expect(round_trip.locator("td").nth(0)).to_contain_text("pass (")
    expect(round_trip.locator("td").nth(1)).to_have_text("fail (5/7: call-nested, parallel-calls)")
    expect(round_trip).to_have_class(re.compile(r"\bworse\b"))
    shot(page, "diff-regression")

    # Both analyses are one click away; the permalink renders the analysis.
    links = section.locator("p.meta a", has_text="analysis")
    expect(links).to_have_count(2)
    links.nth(1).click()
    expect(page).to_have_url(re.compile(r"/a/\d+/$"))
    expect(page.locator("#analysis-status .badge")).to_have_text("done")


def test_the_run_history_marks_the_worse_run_and_compares_any_two(
    page: Page, worsened: tuple[int, int]
) -> None:
    base, head = worsened
    page.goto("/corpus/runs/")
    expect(page.locator(f'tr[data-run="{head}"]')).to_have_class("worse")
    expect(page.locator(f'tr[data-run="{base}"]')).not_to_have_class("worse")
    shot(page, "run-history")
    page.locator("#compare-form input[name=base]").fill(str(base))
    page.locator("#compare-form input[name=head]").fill(str(head))
    page.locator("#compare-form button").click()
    expect(page.locator("h1")).to_have_text(f"Run {base} → run {head}")


def test_the_json_twin_of_the_diff_says_worse(page: Page, worsened: tuple[int, int]) -> None:
    base, head = worsened
    response = page.request.get(f"/corpus/api/diff/?base={base}&head={head}")
    data: dict[str, Any] = response.json()
    assert (data["worse"], data["regressions"]) == (True, 1)
    assert data["templates"][0]["name"] == WORSENED


def test_the_dashboard_counts_skips_sorts_charts_and_exports(
    page: Page, stack: Stack, worsened: tuple[int, int]
) -> None:
    _, head = worsened
    update_results(
        stack,
        f"CorpusResult.objects.filter(run_id={head}, name='google-gemma-2-2b-it').update("
        "round_trip='pass', cases_passed=2, cases_failed=0, cases_total=9)",
    )
    page.set_viewport_size({"width": 900, "height": 1000})
    page.goto(f"/corpus/runs/{head}/")
    gemma = page.locator('tr[data-name="google-gemma-2-2b-it"]')
    expect(gemma.locator(".round-trip .verdict-partial")).to_have_text("pass")
    expect(gemma.locator(".round-trip")).to_contain_text("7 skipped")
    expect(gemma.locator(".round-trip .verdict-pass")).to_have_count(0)
    # No bare dash: each says why.
    dashes = page.locator("#corpus-table .dash")
    for i in range(dashes.count()):
        expect(dashes.nth(i).locator("small")).not_to_be_empty()

    # Markers never wrap inside a token: every chip is one line high.
    chips = page.locator("#corpus-table code.token")
    assert chips.count() > 0
    heights = {round(chips.nth(i).bounding_box()["height"]) for i in range(chips.count())}
    assert len(heights) == 1, heights

    expect(page.locator("#pass-chart polyline")).to_have_count(2)
    shot(page, "dashboard-skips-chart")

    page.locator("#corpus-table th a.sort", has_text="Template").click()
    expect(page).to_have_url(re.compile(r"sort=name"))
    page.locator("#corpus-table th a.sort", has_text="Template").click()
    expect(page).to_have_url(re.compile(r"sort=-name"))
    names = page.locator("#corpus-table tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.name)"
    )
    assert names == sorted(SMALL, reverse=True)

    with page.expect_download() as download:
        page.locator("#export-csv").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    lines = text.strip().splitlines()
    assert lines[0].startswith("name,status,tool_format")
    assert [line.split(",")[0] for line in lines[1:]] == sorted(SMALL, reverse=True)


# Each "—" on the page with the reason beside it (its element's other text) or in a title.
DASH_REASONS = """root => {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.includes("\u2014")) continue;
    const element = node.parentElement;
    const titled = element.closest("[title]");
    found.push((element.textContent.replace("\u2014", "").trim()
                || (titled ? titled.title : "")).trim());
  }
  return found;
}"""


def update_results(stack: Stack, code: str) -> None:
    """Change stored corpus results in the lab's database (Python, CorpusResult imported)."""
    code = f"from lab.corpus.models import CorpusResult\n{code}"
    manage(stack.env, "shell", "--no-imports", "-c", code)


def dash_reasons(page: Page, selector: str) -> list[str]:
    """The reason each "—" under selector gives ("" for a bare dash)."""
    reasons: list[str] = page.locator(selector).evaluate(DASH_REASONS)
    return reasons


def test_every_dash_on_the_dashboard_says_why(
    page: Page, stack: Stack, worsened: tuple[int, int]
) -> None:
    _, head = worsened
    # Rows that leave cells empty: nothing checked, no markers, not timed; an analysis error;
    # Gemma 2 has no tool-call format, so no perturbation fits it.
    update_results(
        stack,
        f"rows = CorpusResult.objects.filter(run_id={head})\n"
        "rows.filter(name='meta-llama-Llama-3.1-8B-Instruct').update(round_trip='', "
        "grammar='', key_markers='', analysis_ms=None, verify_ms=None, vectors_total=0)\n"
        "rows.filter(name='mistralai-Mistral-Nemo-Instruct-2407').update(status='error', "
        "error='the analysis was stopped', analysis_ms=None)",
    )
    page.goto(f"/corpus/runs/{head}/")
    reasons = dash_reasons(page, "#corpus-table")
    assert "" not in reasons, reasons
    assert set(reasons) >= {
        "not checked",
        "no special markers",
        "not timed",
        "no llama.cpp vectors for this template",
        "no perturbation fits (no tool-call format)",
    }, reasons
    shot(page, "dashboard-dashes", "#corpus-table")

    # The run history's first run has nothing to compare with; a result page says why too.
    page.goto("/corpus/runs/")
    assert dash_reasons(page, "#runs-table") == ["no earlier finished run to compare with"]
    for name in ("meta-llama-Llama-3.1-8B-Instruct", "mistralai-Mistral-Nemo-Instruct-2407"):
        page.goto(f"/corpus/runs/{head}/")
        page.locator(f'tr[data-name="{name}"] td a').first.click()
        expect(page.locator("h1")).to_have_text(name)
        reasons = dash_reasons(page, "main table.fields")
        assert reasons and "" not in reasons, (name, reasons)


def test_the_dashboard_pages_do_not_scroll_sideways_at_phone_width(
    page: Page, worsened: tuple[int, int]
) -> None:
    base, head = worsened
    page.set_viewport_size({"width": 375, "height": 800})
    # A wide table may scroll inside its own box; the page itself must not.
    for url in (f"/corpus/runs/{head}/", "/corpus/runs/", f"/corpus/diff/?base={base}&head={head}"):
        response = page.goto(url)
        assert response is not None and response.ok, url
        width, wide = page_width(page)
        assert width <= 375, f"{url}: {width} px wide at a 375 px viewport: {wide}"
    shot(page, "diff-phone")
