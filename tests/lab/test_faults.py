"""No submission is lost or stuck: the whole lab (`python -m lab.run`) under real faults.

Each test starts the lab as `bin/lab` does (its own Valkey with an append-only file, a Celery
worker, Celery beat and daphne) on the test database, pastes templates over HTTP, does
something violent to a process, and checks that every analysis ends `done` or `failed` with a
reason within a bound. Leases and the reconciler's period are short here (see LAB_* below).
"""

from __future__ import annotations

import http.cookiejar
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from child_processes import children
from django.db.models import F

from lab.analyses.models import Analysis
from lab.run import (
    ROOT,
    free_port,
    port_open,
    start_beat,
    start_valkey,
    start_web,
    start_worker,
    stop,
)

pytestmark = pytest.mark.django_db(transaction=True)  # the services must see committed rows

FAULT_SETTINGS = {
    "LAB_ANALYSIS_TIME_LIMIT": "5",
    "LAB_LEASE_SECONDS": "4",  # renewed every second while a task runs (heartbeat)
    "LAB_HEARTBEAT_SECONDS": "0.8",
    "LAB_RECONCILE_SECONDS": "1",
    "LAB_QUEUED_STALE_SECONDS": "3",
    "LAB_RUN_STALE_SECONDS": "5",
    # Submissions return at once: the faults must find a queue of tasks, not one at a time.
    "LAB_SUBMIT_WAIT_SECONDS": "0",
}
BOUND = 60.0  # seconds for every submission to end once the services are back
# Each render loops first, so that an analysis lasts ~0.5 s and a kill lands mid-task. The
# render memo runs an identical render once: 30,000 loops now made an analysis of 0.09 s, and
# ten pastes could all end before the lab's Ctrl-C (a test failed so); 210,000 make ~0.5 s.
SLOW_PREFIX = "{%- for i in range(7) %}{% for j in range(30000) %}{% endfor %}{% endfor %}"




def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclass
class RunningLab:
    """One `python -m lab.run` process and how to reach its web server."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def worker_pid(self) -> int:
        for pid in children(self.process.pid):
            if " worker " in command_line(pid):
                return pid
        raise AssertionError(f"no worker under the lab; log:\n{self.tail()}")

    def paste(self, source: str) -> int:
        """Submit the paste form like a browser; return the analysis id."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.open(self.url + "/").read()
        token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
        body = urllib.parse.urlencode({"source": source, "csrfmiddlewaretoken": token}).encode()
        with opener.open(self.url + "/new/paste/", body, timeout=30) as response:
            return int(response.geturl().rstrip("/").split("/")[-1])

    def tail(self) -> str:
        return self.said()[-4000:]

    def said(self) -> str:
        return self.log.read_text(errors="replace")


class LabRunner:
    """Start, interrupt and restart `python -m lab.run` on one var dir and one database."""

    def __init__(self, env: dict[str, str], work: Path) -> None:
        self.env, self.work, self.port = env, work, free_port()

    def start(self) -> RunningLab:
        log = self.work / "lab.log"
        output = open(log, "ab")  # noqa: SIM115 - the child writes it; closed with the test dir
        process = subprocess.Popen(
            [sys.executable, "-m", "lab.run", "--port", str(self.port), "--workers", "2"],
            cwd=ROOT,
            env=self.env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while not port_open(self.port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the lab did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.2)
        return RunningLab(process, f"http://127.0.0.1:{self.port}", log)

    @staticmethod
    def interrupt(lab: RunningLab) -> None:
        """Ctrl-C, as a user stops bin/lab."""
        lab.process.send_signal(signal.SIGINT)
        lab.process.wait(30)


def fault_env(test_database_url: str, work: Path) -> dict[str, str]:
    env = {**os.environ, **FAULT_SETTINGS}
    env.update(DATABASE_URL=test_database_url, LAB_VAR_DIR=str(work / "var"))
    env.pop("REDIS_URL", None)  # bin/lab's own Valkey
    return env


@pytest.fixture
def runner(test_database_url: str, tmp_path: Path) -> Iterator[LabRunner]:
    runner = LabRunner(fault_env(test_database_url, tmp_path), tmp_path)
    yield runner


@pytest.fixture
def lab(runner: LabRunner) -> Iterator[RunningLab]:
    lab = runner.start()
    yield lab
    if lab.process.poll() is None:
        LabRunner.interrupt(lab)


def sources(corpus_templates: Path, count: int, tag: str) -> list[str]:
    """`count` different slow variants of a real template."""
    base = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    return [f"{{# {tag} {n} #}}{SLOW_PREFIX}{base}" for n in range(count)]


def wait_until_all_end(ids: list[int], log: str = "", bound: float = BOUND) -> list[Analysis]:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        rows = list(Analysis.objects.filter(pk__in=ids))
        if len(rows) == len(ids) and not any(row.is_pending for row in rows):
            return rows
        time.sleep(0.5)
    pending = Analysis.objects.filter(pk__in=ids, status__in=["queued", "running"])
    states = [(row.pk, row.status, row.attempts) for row in pending]
    raise AssertionError(f"still pending after {bound} s: {states}\n{log}")


def wait_until_one_runs(ids: list[int], log: str) -> None:
    deadline = time.monotonic() + 30
    while not Analysis.objects.filter(pk__in=ids, status=Analysis.Status.RUNNING).exists():
        assert time.monotonic() < deadline, f"no analysis started within 30 s:\n{log}"
        time.sleep(0.1)


def assert_ended_well(rows: list[Analysis]) -> None:
    for row in rows:
        assert row.status in (Analysis.Status.DONE, Analysis.Status.FAILED), row.status
        if row.status == Analysis.Status.FAILED:
            assert row.error, f"analysis {row.pk} failed without a reason"


def test_sigkill_of_the_pool_children_loses_nothing(
    lab: RunningLab, corpus_templates: Path
) -> None:
    ids = [lab.paste(source) for source in sources(corpus_templates, 12, "pool")]
    wait_until_one_runs(ids, lab.tail())
    killed = 0
    worker = lab.worker_pid()
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline:
        for child in children(worker):
            os.kill(child, signal.SIGKILL)
            killed += 1
        time.sleep(0.7)
    assert killed >= 4
    rows = wait_until_all_end(ids, lab.tail())
    assert_ended_well(rows)
    assert sum(row.attempts > 1 for row in rows) >= 1  # some were taken again after a kill


def test_sigkill_of_the_worker_is_survived_by_a_restart(
    lab: RunningLab, corpus_templates: Path
) -> None:
    ids = [lab.paste(source) for source in sources(corpus_templates, 8, "worker")]
    wait_until_one_runs(ids, lab.tail())
    old_worker = lab.worker_pid()
    os.kill(old_worker, signal.SIGKILL)
    rows = wait_until_all_end(ids, lab.tail())
    assert_ended_well(rows)
    assert lab.worker_pid() != old_worker
    assert "the Celery worker exited (-9); restarting it" in lab.said()


# About 2 s per analysis on a quiet machine (measured 2.1 s in process): each distinct render
# loops 900,000 times, about 0.3 s (well under the 1 s render limit). The render memo runs an
# identical render once, so 360,000 loops gave 1.3 s: a row could end within a second of
# outliving its 1 s lease, between two polls of the test (it failed so in one of two full runs).
LONG_PREFIX = "{%- for i in range(10) %}{% for j in range(90000) %}{% endfor %}{% endfor %}"
LEASE = 1.0


def wait_until_one_outlives_its_lease(ids: list[int], log: str) -> None:
    """Wait for a running row whose lease reaches past twice the lease it was claimed with:
    renewed. (Read off the row, not off the clock: a renewal that lags behind a busy
    database write is still a renewal.)"""
    deadline = time.monotonic() + 60
    while True:
        running = Analysis.objects.filter(pk__in=ids, status=Analysis.Status.RUNNING)
        renewed = F("started_at") + timedelta(seconds=2 * LEASE)
        if running.filter(lease_until__gt=renewed).exists():
            return
        pending = Analysis.objects.filter(pk__in=ids, status__in=["queued", "running"])
        assert pending.exists(), "every analysis ended before outliving its lease"
        assert time.monotonic() < deadline, f"no analysis outlived its lease:\n{log}"
        time.sleep(0.1)


def test_a_dead_worker_is_recovered_within_its_short_lease(
    test_database_url: str, tmp_path: Path, corpus_templates: Path
) -> None:
    """Analyses outlive their 1 s lease while the worker lives (its heartbeat renews it); once
    the worker and its pool are SIGKILLed, the rows it held are taken again within seconds."""
    env = fault_env(test_database_url, tmp_path)
    env.update(LAB_ANALYSIS_TIME_LIMIT="30", LAB_LEASE_SECONDS=str(LEASE),
               LAB_HEARTBEAT_SECONDS="0.2", LAB_RECONCILE_SECONDS="0.5")
    lab = LabRunner(env, tmp_path).start()
    try:
        base = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
        ids = [lab.paste(f"{{# lease {n} #}}{LONG_PREFIX}{base}") for n in range(8)]
        wait_until_one_outlives_its_lease(ids, lab.tail())
        assert not Analysis.objects.filter(pk__in=ids, attempts__gt=1).exists()
        worker = lab.worker_pid()
        os.killpg(worker, signal.SIGKILL)  # the worker, its pool and their analysis children
        killed_at = time.monotonic()
        rows = wait_until_all_end(ids, lab.tail(), bound=90)
        recovered_in = time.monotonic() - killed_at
        assert_ended_well(rows)
        assert any(row.attempts > 1 for row in rows)  # rows the dead worker held, taken again
        # Was the time limit + 40 s lease plus a 30 s reconciler period (~190 s) before the
        # first of them could even be taken again.
        assert recovered_in < 60, f"{recovered_in:.1f} s from the kill to the last row ending"
    finally:
        LabRunner.interrupt(lab)


def test_ctrl_c_and_restart_of_the_lab_loses_nothing(
    runner: LabRunner, corpus_templates: Path
) -> None:
    lab = runner.start()
    ids = [lab.paste(source) for source in sources(corpus_templates, 10, "restart")]
    LabRunner.interrupt(lab)
    assert Analysis.objects.filter(pk__in=ids, status__in=["queued", "running"]).exists()
    port_before = (runner.work / "var" / "valkey" / "port").read_text()
    again = runner.start()
    try:
        rows = wait_until_all_end(ids, again.tail())
        assert_ended_well(rows)
        assert (runner.work / "var" / "valkey" / "port").read_text() == port_before
        assert (runner.work / "var" / "valkey" / "appendonlydir").is_dir()
    finally:
        LabRunner.interrupt(again)


def test_a_paste_while_the_broker_is_down_starts_once_it_is_back(
    test_database_url: str, tmp_path: Path, corpus_templates: Path
) -> None:
    broker_port = free_port()
    env = fault_env(test_database_url, tmp_path)
    env["REDIS_URL"] = f"redis://127.0.0.1:{broker_port}/0"
    web_port = free_port()
    processes = [start_web(env, "127.0.0.1", web_port, log=tmp_path / "web.log")]
    try:
        lab = RunningLab(processes[0], f"http://127.0.0.1:{web_port}", tmp_path / "web.log")
        analysis_id = lab.paste(sources(corpus_templates, 1, "broker")[0])  # no HTTP 500
        page = urllib.request.urlopen(f"{lab.url}/a/{analysis_id}/").read().decode()
        assert "will start when the task queue is back" in page
        valkey, _ = start_valkey(tmp_path / "valkey", port=broker_port)
        processes.append(valkey)
        processes.append(start_worker(env, 1, log=tmp_path / "worker.log"))
        processes.append(start_beat(env, tmp_path / "beat-schedule", log=tmp_path / "beat.log"))
        rows = wait_until_all_end([analysis_id], (tmp_path / "worker.log").read_text()[-3000:])
        assert rows[0].status == Analysis.Status.DONE, rows[0].error
    finally:
        stop(processes)


def test_a_killed_broker_is_restarted_with_its_queue(
    lab: RunningLab, corpus_templates: Path
) -> None:
    ids = [lab.paste(source) for source in sources(corpus_templates, 6, "valkey")]
    valkey = next(pid for pid in children(lab.process.pid) if "valkey" in command_line(pid))
    os.kill(valkey, signal.SIGKILL)
    rows = wait_until_all_end(ids, lab.tail())
    assert_ended_well(rows)
    assert "Valkey exited (-9); restarting it" in lab.said()
    try:
        urllib.request.urlopen(lab.url + "/", timeout=10).read()
    except urllib.error.URLError as exc:  # pragma: no cover - the message is the point
        raise AssertionError(f"the web server died with the broker: {exc}") from exc
