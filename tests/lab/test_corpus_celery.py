"""A corpus run over ../shared/corpus/templates through real Celery workers and a real Valkey.

The commands run as a user runs them (`manage.py corpus import`, `manage.py corpus run
--wait`) in their own processes, against the test database; a worker process started here
evaluates one template per task and the chord's callback closes the run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from child_processes import children
from django.test import Client

from lab.corpus.models import CorpusResult, CorpusRun, EntryAttempt
from lab.run import ROOT, start_valkey, start_worker, stop

pytestmark = pytest.mark.django_db(transaction=True)  # the processes must see committed rows


@pytest.fixture(scope="module")
def services(
    test_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, str], Path]]:
    """Valkey and a two-process Celery worker on the test database; the env to reach them."""
    logs = tmp_path_factory.mktemp("corpus-celery")
    valkey, url = start_valkey(logs / "valkey", log=logs / "valkey.log")
    env = {**os.environ, "REDIS_URL": url, "DATABASE_URL": test_database_url}
    worker = start_worker(env, concurrency=2, log=logs / "worker.log")
    yield env, logs
    stop([valkey, worker])


def manage(
    env: dict[str, str], *args: str, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "corpus", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_corpus_run_completes_through_real_workers(
    services: tuple[dict[str, str], Path], corpus_templates: Path
) -> None:
    env, logs = services
    count = len(list(corpus_templates.glob("*.jinja")))
    imported = manage(env, "import", str(corpus_templates))
    assert imported.stdout.startswith(f"import: {count} added, 0 updated"), imported.stderr

    started = time.monotonic()
    first = manage(env, "run", "--wait", "--timeout", "600")
    first_seconds = time.monotonic() - started
    worker_log = (logs / "worker.log").read_text(errors="replace")
    assert first.returncode == 0, first.stderr + worker_log[-3000:]
    run = CorpusRun.objects.get()
    assert run.status == CorpusRun.Status.DONE
    assert run.total == count == run.results.count()
    assert run.errors == run.results.filter(status=CorpusResult.Status.ERROR).count()
    assert run.results.filter(status=CorpusResult.Status.DONE).count() >= count - 2
    assert run.results.filter(round_trip="pass").count() >= count // 2
    assert run.results.exclude(vectors_total=0).count() >= 40
    # The work happened in the worker: one task per template, then the chord's callback.
    assert worker_log.count("evaluate_entry_task") >= count
    assert "close_run_task" in worker_log

    started = time.monotonic()
    second = manage(env, "run", "--wait", "--fail-on-regression", "--timeout", "600")
    second_seconds = time.monotonic() - started
    assert second.returncode == 0, second.stderr
    rerun = CorpusRun.objects.order_by("-pk").first()
    assert rerun is not None and rerun.baseline == run
    assert (rerun.regressions, rerun.changed) == (0, 0)
    assert second.stdout.splitlines()[-1].endswith(
        f"against run {run.pk}: 0 worse, 0 better, 0 changed"
    )

    data = Client().get(f"/corpus/api/runs/{rerun.pk}/").json()
    assert len(data["results"]) == count and data["worse"] is False
    print(f"\ncorpus of {count}: first run {first_seconds:.1f} s, second {second_seconds:.1f} s")


# --- a poison template: its task kills the worker process every time ----------------------------

# Each render loops first, so that the evaluation lasts long enough for a kill to land mid-task.
SLOW_PREFIX = "{%- for i in range(90000) %}{% endfor %}"  # slow enough to be caught running


def started() -> int:
    """How many times the template's evaluation has started so far."""
    return sum(EntryAttempt.objects.values_list("attempts", flat=True))




def test_a_template_that_kills_its_worker_every_time_fails_after_the_attempt_cap(
    test_database_url: str, corpus_templates: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "poison"
    folder.mkdir()
    base = (corpus_templates / "Qwen3-Coder.jinja").read_text()
    (folder / "poison.jinja").write_text(SLOW_PREFIX + base)
    valkey, url = start_valkey(tmp_path / "valkey", log=tmp_path / "valkey.log")
    env = {**os.environ, "REDIS_URL": url, "DATABASE_URL": test_database_url,
           "LAB_MAX_ATTEMPTS": "2"}
    log = tmp_path / "worker.log"
    worker = start_worker(env, concurrency=1, log=log)
    try:
        assert manage(env, "import", str(folder)).returncode == 0
        assert manage(env, "run").returncode == 0
        kills, seen, deadline = 0, 0, time.monotonic() + 90
        while not CorpusRun.objects.filter(status=CorpusRun.Status.DONE).exists():
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            # "The template" kills its process in each allowed attempt (two: LAB_MAX_ATTEMPTS).
            if seen < started() <= 2:
                seen = started()
                for pid in children(worker.pid):
                    os.kill(pid, signal.SIGKILL)
                    kills += 1
            time.sleep(0.02)
    finally:
        stop([worker, valkey])
    result = CorpusResult.objects.get()
    assert kills == 2, result.error  # both allowed attempts died; the third start failed it
    assert result.status == CorpusResult.Status.ERROR, log.read_text(errors="replace")[-4000:]
    assert result.error.startswith("the worker evaluating this template died 2 times")
    assert CorpusRun.objects.get().errors == 1
