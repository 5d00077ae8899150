"""End to end through real processes: Valkey, a Celery worker and daphne, all started here.

The test process only posts over HTTP and reads the database; the web server publishes the task
and the worker runs it, as in a deployment.
"""

from __future__ import annotations

import http.cookiejar
import os
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lab.analyses.models import Analysis
from lab.run import free_port, start_valkey, start_web, start_worker, stop

pytestmark = pytest.mark.django_db(transaction=True)  # the services must see committed rows


@dataclass
class Lab:
    url: str
    logs: Path
    impatient_url: str = ""  # a second web process that waits only briefly for an analysis

    def paste(self, source: str, *, impatient: bool = False) -> int:
        """Submit the paste form like a browser (CSRF cookie and token); return the analysis id
        once the submission's response (and its redirect) arrived."""
        url = self.impatient_url if impatient else self.url
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(url + "/").read()
        token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
        body = urllib.parse.urlencode({"source": source, "csrfmiddlewaretoken": token}).encode()
        with opener.open(url + "/new/paste/", body) as response:
            return int(response.geturl().rstrip("/").split("/")[-1])

    def page(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path) as response:
            return str(response.read().decode())

    def log(self, name: str) -> str:
        return (self.logs / name).read_text(errors="replace")[-3000:]


@pytest.fixture(scope="module")
def lab(test_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    logs = tmp_path_factory.mktemp("celery-integration")
    valkey, redis_url = start_valkey(logs / "valkey", log=logs / "valkey.log")
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATABASE_URL": test_database_url,
    }
    processes = [valkey]
    try:
        processes.append(start_worker(env, concurrency=1, log=logs / "worker.log"))
        # Generous on the first web process, so a quick analysis always lands on its result.
        port, impatient = free_port(), free_port()
        waiting = {**env, "LAB_SUBMIT_WAIT_SECONDS": "30"}
        processes.append(start_web(waiting, "127.0.0.1", port, log=logs / "web.log"))
        brief = {**env, "LAB_SUBMIT_WAIT_SECONDS": "0.3"}
        processes.append(start_web(brief, "127.0.0.1", impatient, log=logs / "web-brief.log"))
        yield Lab(f"http://127.0.0.1:{port}", logs, f"http://127.0.0.1:{impatient}")
    finally:
        stop(processes)


def wait_for_outcome(lab: Lab, analysis_id: int, timeout: float = 60) -> Analysis:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        analysis = Analysis.objects.get(pk=analysis_id)
        if not analysis.is_pending:
            return analysis
        time.sleep(0.2)
    raise AssertionError(
        f"analysis {analysis_id} still {analysis.status} after {timeout} s; "
        f"worker log:\n{lab.log('worker.log')}\nweb log:\n{lab.log('web.log')}"
    )


def test_a_pasted_template_is_analyzed_by_the_worker(lab: Lab, corpus_templates: Path) -> None:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    analysis = wait_for_outcome(lab, lab.paste(source))
    assert analysis.status == Analysis.Status.DONE, analysis.error
    assert analysis.result is not None
    assert analysis.result["template_sha256"] == analysis.template.sha256
    assert 'id="cmp-T1"' in lab.page(f"/a/{analysis.pk}/")


def test_the_worker_stores_a_failure_with_its_message(lab: Lab) -> None:
    analysis = wait_for_outcome(lab, lab.paste("{{ unclosed"))
    assert analysis.status == Analysis.Status.FAILED
    assert "syntax error" in analysis.error
    assert "syntax error" in lab.page(f"/a/{analysis.pk}/")


def test_a_quick_analysis_lands_straight_on_its_result(lab: Lab, corpus_templates: Path) -> None:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    analysis_id = lab.paste("{# lands on its result #}" + source)
    # Read as the redirect arrived, with no waiting: the submission waited for the worker.
    analysis = Analysis.objects.get(pk=analysis_id)
    assert analysis.status == Analysis.Status.DONE, (analysis.status, lab.log("web.log"))


def test_a_slow_analysis_shows_its_pending_page_first_and_still_ends(lab: Lab) -> None:
    # Every render runs into the 1 s render limit, so this analysis takes seconds.
    slow = (
        "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
        "{{ messages[0].content }}"
    )
    analysis_id = lab.paste(slow, impatient=True)
    assert Analysis.objects.get(pk=analysis_id).is_pending
    assert "data-status-socket" in lab.page(f"/a/{analysis_id}/")  # the pending page watches
    analysis = wait_for_outcome(lab, analysis_id)
    assert analysis.status == Analysis.Status.FAILED
    assert "time limit" in analysis.error
