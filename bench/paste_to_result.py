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


def time_pastes(url: str, source: str, runs: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as playwright:
        chromium = playwright.chromium
        browser = chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page()
        for run in range(runs + 1):  # the first warms the worker's imports up, not counted
            page.goto(url + "/")
            page.fill("#paste-form textarea", f"{{# bench paste {time.time()} {run} #}}{source}")
            # Playwright's own checks before a click (visible, stable over two animation
            # frames, enabled) take 20-40 ms; they run before the timer: a user's click has none.
            submit = page.locator("#paste-submit")
            submit.click(trial=True)
            started = time.perf_counter()
            submit.click(force=True)
            page.wait_for_selector("#summary", state="visible", timeout=30_000)
            elapsed = time.perf_counter() - started
            if run:
                times.append(elapsed)
                status = page.inner_text("#analysis-status").strip()
                print(f"paste {run:2}: {elapsed * 1000:7.1f} ms ({status})", flush=True)
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--template", default="Qwen-Qwen3-0.6B.jinja")
    options = parser.parse_args()
    source = (CORPUS / options.template).read_text()
    with tempfile.TemporaryDirectory(prefix="paste-bench-") as work:
        processes, url = start_lab(Path(work))
        try:
            times = sorted(time_pastes(url, source, options.runs))
        finally:
            stop(processes)  # type: ignore[arg-type]
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    print(
        f"{options.template}: paste -> results on screen over {len(times)} pastes: "
        f"median {statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms "
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
