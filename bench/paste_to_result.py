"""Time paste -> results on screen in a real browser against the whole lab in processes.

Usage: .venv/bin/python bench/paste_to_result.py [--runs N] [--template NAME.jinja]

Starts the lab as bin/lab does (Valkey, a Celery worker with 2 processes, uvicorn) on a fresh
SQLite database, then with Debian's Chromium (Playwright) pastes a corpus template N times (each
a different source, so each is analysed anew) and times from the click on "Analyse" to the
result summary being visible: redirect, page load, the worker's analysis, the status pushed over
the channel layer, and the fetch of the page body. Prints each time, the median and the p95.
Wall-clock times (this is what a user waits), on a machine other processes share.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.run import free_port, migrate, start_valkey, start_web, start_worker, stop  # noqa: E402

CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def start_lab(work: Path) -> tuple[list[object], str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{work / 'lab.sqlite3'}"}
    migrate(env)
    valkey, env["REDIS_URL"] = start_valkey(work / "valkey", log=work / "valkey.log")
    processes = [valkey, start_worker(env, 2, log=work / "worker.log")]
    port = free_port()
    processes.append(start_web(env, "127.0.0.1", port, log=work / "web.log"))
    return processes, f"http://127.0.0.1:{port}"


RESULT_PAGE_TIMING = """() => {
    const n = performance.getEntriesByType('navigation')[0];
    const at = (t) => performance.timeOrigin + t;
    return {navigation: performance.timeOrigin, request: at(n.requestStart),
            first_byte: at(n.responseStart), last_byte: at(n.responseEnd),
            dom_interactive: at(n.domInteractive)};
}"""


def phases(requests: list[object], page: object) -> str:
    """Where one paste's time went, in ms after the click event (the page's clock): each
    request's start, first and last byte (Playwright's record), the result page's navigation,
    DOM interactive and the summary's paint."""
    clicked, painted = page.evaluate(SUMMARY_PAINTED)  # type: ignore[attr-defined]
    parts = []
    for request in requests:
        timing = request.timing  # type: ignore[attr-defined]
        url = request.url  # type: ignore[attr-defined]
        if "/static/" in url:
            continue
        start = timing["startTime"]
        path = "/" + url.split("/", 3)[-1][:20]
        parts.append(
            f"{request.method} {path} {start - clicked:.0f}"  # type: ignore[attr-defined]
            f"/{start + timing['responseStart'] - clicked:.0f}"
            f"/{start + timing['responseEnd'] - clicked:.0f}"
        )
    marks = page.evaluate(RESULT_PAGE_TIMING)  # type: ignore[attr-defined]
    parts += [f"{name} {at - clicked:.0f}" for name, at in marks.items()]
    parts.append(f"summary painted {painted - clicked:.0f}")
    return "\n    " + ", ".join(parts)


NOTE_CLICK = """() => document.addEventListener('click', (event) => {
    sessionStorage.setItem('bench-click', String(performance.timeOrigin + event.timeStamp));
}, {capture: true, once: true})"""

# When the summary's heading was painted (Element Timing), in the same clock as the click.
SUMMARY_PAINTED = """() => new Promise((resolve) => {
    new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
            if (entry.identifier === 'summary') {
                resolve([Number(sessionStorage.getItem('bench-click')),
                         performance.timeOrigin + entry.renderTime]);
            }
        }
    }).observe({type: 'element', buffered: true});
})"""


def in_page(page: object) -> float:
    """Seconds from the click event, as the home page received it, to the paint of the
    result's summary, as the result page recorded it: the user's wait without the time
    Playwright takes to send its click and to poll for the summary."""
    clicked, painted = page.evaluate(SUMMARY_PAINTED)  # type: ignore[attr-defined]
    return float(painted - clicked) / 1000


def time_pastes(
    url: str, source: str, runs: int, trace: bool = False
) -> tuple[list[float], list[float]]:
    from playwright.sync_api import sync_playwright

    times, painted = [], []
    with sync_playwright() as playwright:
        chromium = playwright.chromium
        browser = chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        requests: list[object] = []
        page.on("requestfinished", lambda request: requests.append(request))
        for run in range(runs + 1):  # the first warms the worker's imports up, not counted
            page.goto(url + "/")
            page.fill("#paste-form textarea", f"{{# bench paste {time.time()} {run} #}}{source}")
            # Playwright's own checks before a click (visible, stable over two animation
            # frames, enabled) take 20-40 ms; they run before the timer: a user's click has none.
            submit = page.locator("#paste-submit")
            submit.click(trial=True)
            page.evaluate(NOTE_CLICK)
            requests.clear()
            started = time.perf_counter()
            submit.click(force=True)
            page.wait_for_selector("#summary", state="visible", timeout=30_000)
            elapsed = time.perf_counter() - started
            if run:
                times.append(elapsed)
                painted.append(in_page(page))
                status = page.inner_text("#analysis-status").strip()
                details = phases(requests, page) if trace else ""
                print(
                    f"paste {run:2}: {elapsed * 1000:7.1f} ms, in the page "
                    f"{painted[-1] * 1000:7.1f} ms ({status}){details}",
                    flush=True,
                )
        browser.close()
    return times, painted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--template", default="Qwen-Qwen3-0.6B.jinja")
    parser.add_argument(
        "--trace", action="store_true", help="print each paste's phases (navigation timing)"
    )
    options = parser.parse_args()
    source = (CORPUS / options.template).read_text()
    with tempfile.TemporaryDirectory(prefix="paste-bench-") as work:
        processes, url = start_lab(Path(work))
        try:
            times, painted = time_pastes(url, source, options.runs, options.trace)
        finally:
            stop(processes)  # type: ignore[arg-type]
    load = f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    print(f"{options.template}, {len(times)} pastes ({load}):")
    print(f"  paste -> results on screen, in the page:        {percentiles(painted)}")
    print(f"  the same, as Playwright's click and poll see it: {percentiles(times)}")


def percentiles(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms"


if __name__ == "__main__":
    main()
