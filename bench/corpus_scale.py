"""The corpus at scale: build, import and run a synthetic corpus; time its pages and JSON API.

Usage: .venv/bin/python bench/corpus_scale.py [--sizes 1000,10000] [--workers 1,2]
       [--evaluate-up-to 1000] [--requests 20] [--keep]

The synthetic corpus: the real templates of ../shared/corpus/templates and templates_corpus/,
copied round-robin, each copy with its own leading Jinja comment (`{# corpus-scale copy N #}`),
so every template text is distinct and gets its own analysis (nothing is reused by text).

Everything runs as in production, on a PostgreSQL database of its own (created here, dropped
at the end unless --keep) and a Valkey of its own:
- `manage.py corpus import DIR` for each size (timed);
- for each size up to --evaluate-up-to and each --workers count: a real Celery worker with that
  many processes, `manage.py corpus run --wait`; stored analyses are deleted before each run so
  every run does the whole work. Reported: wall time (run created -> closed), templates/s,
  worker CPU per template (every process of the worker, the pool children and their resident
  analysis children included) and the peak RSS of the worker's processes;
- for sizes above --evaluate-up-to, two runs whose rows are copies of the evaluated run's rows
  (said so in the output), the second with 1% of its templates made worse: what the pages read
  is the same columns, and evaluating 10,000 templates takes ~15 min of two cores;
- after each size, the pages through a real uvicorn server (one process): dashboard, a deep
  dashboard page, a filtered and sorted dashboard, run history, run detail, diff, and the JSON
  API (run, latest, diff): p50 / p95 of --requests sequential GETs each after a warm-up, and
  the SQL queries of one request (Django's CaptureQueriesContext, in this process).

Takes ~8-10 min with the defaults on a quiet 2-core machine (1,000 templates evaluated twice,
10,000 imported and copied; 1,153 s at load 5-8); wall-clock figures on a shared machine:
note the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.run import free_port, migrate, start_valkey, start_web, start_worker, stop  # noqa: E402

SHARED_TEMPLATES = ROOT / ".." / "shared" / "corpus" / "templates"
REPO_TEMPLATES = ROOT / "templates_corpus"
POSTGRES = os.environ.get("LAB_BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --- the synthetic corpus --------------------------------------------------------------------


def real_templates() -> list[tuple[str, str]]:
    """(stem, source) of every real template the synthetic corpus copies."""
    paths = sorted(SHARED_TEMPLATES.glob("*.jinja")) + sorted(REPO_TEMPLATES.rglob("*.jinja"))
    if not paths:
        sys.exit(f"no templates under {SHARED_TEMPLATES} or {REPO_TEMPLATES}")
    return [(path.stem, path.read_text(encoding="utf-8")) for path in paths]


def write_corpus(folder: Path, size: int) -> None:
    """Make `folder` hold `size` distinct templates (files already there are kept)."""
    originals = real_templates()
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(size):
        stem, source = originals[number % len(originals)]
        path = folder / f"{stem}--{number:05d}.jinja"
        if not path.exists():
            # A leading comment renders nothing, and makes the text (and its sha256) unique.
            path.write_text(f"{{# corpus-scale copy {number} #}}{source}", encoding="utf-8")


# --- processes -------------------------------------------------------------------------------


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def process_tree(root: int) -> list[int]:
    """The pid and every live descendant's pid."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of the processes and of their reaped children."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / CLOCK_TICKS


def peak_rss_mb(pids: list[int]) -> tuple[float, float]:
    """(largest peak RSS of one process, sum of the peaks) in MiB."""
    peaks = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return (max(peaks, default=0.0), sum(peaks))


def wait_for_log(log: Path, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    sys.exit(f"{log}: no {text!r} within {timeout:g} s")


@dataclass
class RunFigures:
    size: int
    workers: int
    wall_s: float
    cpu_per_template_ms: float
    peak_rss_mb: float
    total_rss_mb: float
    errors: int


def timed_run(env: dict[str, str], work: Path, size: int, workers: int) -> RunFigures:
    """Run the corpus through a fresh worker with `workers` processes; measure it."""
    from lab.analyses.models import Analysis
    from lab.corpus.models import CorpusRun

    # Every run does the whole work: no analysis stored by an earlier run is reused.
    Analysis.objects.filter(template__corpus_entries__isnull=False).delete()
    log = work / f"worker-{size}-{workers}.log"
    worker = start_worker(env, concurrency=workers, log=log)
    try:
        wait_for_log(log, "ready.")
        time.sleep(1)  # the pool children finish importing
        before = cpu_seconds(process_tree(worker.pid))
        manage(env, "corpus", "run", "--wait", "--timeout", "7200")
        tree = process_tree(worker.pid)
        cpu = cpu_seconds(tree) - before
        peak, total = peak_rss_mb(tree)
    finally:
        stop([worker])
    run = CorpusRun.objects.order_by("-pk").first()
    assert run is not None and run.finished_at is not None and run.total == size, run
    wall = (run.finished_at - run.created_at).total_seconds()
    return RunFigures(size, workers, wall, cpu / size * 1000, peak, total, run.errors)


def copied_run(size: int, worse_share: float = 0.0) -> int:
    """A closed run of every active entry whose rows copy the newest evaluated run's rows;
    `worse_share` of them (spread evenly) with their grammar check failed, for the diff."""
    from django.utils import timezone

    from lab.corpus import runs
    from lab.corpus.models import CorpusResult, CorpusRun, CorpusTemplate

    source = (
        CorpusRun.objects.filter(status=CorpusRun.Status.DONE).exclude(trigger="bench")
        .order_by("-pk").first()
    )
    assert source is not None
    evaluated = list(CorpusResult.objects.filter(run=source).order_by("name"))
    every = round(1 / worse_share) if worse_share else 0
    run = CorpusRun.objects.create(
        analyzer_version=source.analyzer_version, trigger="bench", total=size,
        started_at=timezone.now(), note="rows copied by bench/corpus_scale.py, not evaluated",
    )
    entries = CorpusTemplate.objects.filter(active=True).order_by("pk").select_related("template")
    batch = []
    for number, entry in enumerate(entries.iterator(chunk_size=2000)):
        row = evaluated[number % len(evaluated)]
        row.pk, row.run_id, row.entry_id, row.name = None, run.pk, entry.pk, entry.name
        row.template_sha256 = entry.template.sha256
        if every and number % every == 0:
            row.grammar = "fail"
        batch.append(CorpusResult(**{f.attname: getattr(row, f.attname)
                                     for f in CorpusResult._meta.concrete_fields}))
        if len(batch) == 2000:
            CorpusResult.objects.bulk_create(batch)
            batch = []
    CorpusResult.objects.bulk_create(batch)
    runs.close_run(run.pk)
    return run.pk


# --- pages -----------------------------------------------------------------------------------


def page_paths(size: int) -> Iterator[tuple[str, str]]:
    """(label, path) of every page and API answer timed."""
    from lab.corpus.models import CorpusRun

    head = CorpusRun.objects.order_by("-pk").first()
    assert head is not None
    diff = f"base={head.baseline_id}&head={head.pk}"
    yield "dashboard", "/corpus/"
    yield "dashboard, last page", f"/corpus/?page={size // 50}"
    yield "dashboard, filtered+sorted", "/corpus/?q=qwen&round_trip=pass&sort=-analysis"
    yield "run history", "/corpus/runs/"
    yield "run detail", f"/corpus/runs/{head.pk}/"
    if head.baseline_id:
        yield "diff", f"/corpus/diff/?{diff}"
    yield "API run", f"/corpus/api/runs/{head.pk}/"
    yield "API run, last page", f"/corpus/api/runs/{head.pk}/?page={size // 100}"
    yield "API latest", "/corpus/api/runs/latest/"
    if head.baseline_id:
        yield "API diff", f"/corpus/api/diff/?{diff}"


def query_count(path: str) -> int:
    """SQL queries one request of the path makes (in this process)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = Client(HTTP_HOST="127.0.0.1").get(path)
    assert response.status_code == 200, (path, response.status_code)
    return len(captured)


def timed_gets(base: str, path: str, requests: int) -> tuple[list[float], int]:
    """Seconds of each sequential GET (the first, a warm-up, not counted); the body's bytes."""
    times, size = [], 0
    for number in range(requests + 1):
        started = time.perf_counter()
        with urllib.request.urlopen(base + path, timeout=60) as response:
            size = len(response.read())
        if number:
            times.append(time.perf_counter() - started)
    return times, size


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def vacuum_analyze() -> None:
    """Bring the tables' statistics and visibility maps up to date, as autovacuum would have by
    the time anyone looks at a run that took minutes (rows copied a second ago would not be)."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("corpus_corpusresult", "corpus_corpusrun", "corpus_corpustemplate"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def time_pages(env: dict[str, str], work: Path, size: int, requests: int) -> None:
    vacuum_analyze()
    port = free_port()
    web = start_web(env, "127.0.0.1", port, log=work / f"web-{size}.log")
    try:
        print(f"\npages at {size:,} templates ({requests} GETs each, load {load()}):")
        print(f"{'page':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'queries':>7} {'KB':>7}")
        for label, path in page_paths(size):
            times, body = timed_gets(f"http://127.0.0.1:{port}", path, requests)
            print(f"{label:28} {statistics.median(times) * 1000:8.1f} "
                  f"{percentile(times, 0.95) * 1000:8.1f} {max(times) * 1000:8.1f} "
                  f"{query_count(path):7d} {body / 1024:7.1f}")
    finally:
        stop([web])


# --- the database ----------------------------------------------------------------------------


def create_database(name: str) -> None:
    import psycopg

    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')


def drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def bench(args: argparse.Namespace, work: Path, database: str) -> None:
    valkey, redis_url = start_valkey(work / "valkey", log=work / "valkey.log")
    env = {**os.environ, "DATABASE_URL": f"{POSTGRES}/{database}", "REDIS_URL": redis_url,
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost,testserver"}
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "lab.settings"
    try:
        migrate(env)
        import django

        django.setup()
        corpus = work / "corpus"
        for size in args.sizes:
            write_corpus(corpus, size)
            started = time.perf_counter()
            imported = manage(env, "corpus", "import", str(corpus)).stdout.strip()
            print(f"\nimport to {size:,}: {time.perf_counter() - started:.1f} s ({imported}), "
                  f"load {load()}")
            if size <= args.evaluate_up_to:
                for workers in args.workers:
                    figures = timed_run(env, work, size, workers)
                    print(f"run {size:,} templates, {workers} worker process(es): "
                          f"{figures.wall_s:.1f} s, {size / figures.wall_s:.1f} templates/s, "
                          f"{figures.cpu_per_template_ms:.0f} ms worker CPU per template, "
                          f"peak RSS {figures.peak_rss_mb:.0f} MiB per process "
                          f"({figures.total_rss_mb:.0f} MiB summed), {figures.errors} errors, "
                          f"load {load()}")
            else:
                # Two runs of this size (the second with 1% of its templates made worse), so
                # that the diff compares runs of one corpus, as it does after a change.
                started = time.perf_counter()
                copied_run(size)
                copied_run(size, worse_share=0.01)
                print(f"2 runs of {size:,} templates: rows copied from the evaluated run "
                      f"({time.perf_counter() - started:.1f} s), not evaluated")
            time_pages(env, work, size, args.requests)
    finally:
        from django.db import connections

        connections.close_all()
        stop([valkey])


def sizes(text: str) -> list[int]:
    return sorted(int(part) for part in text.split(",") if part.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes, default=[1000, 10000])
    parser.add_argument("--workers", type=sizes, default=[1, 2])
    parser.add_argument("--evaluate-up-to", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the database and files")
    args = parser.parse_args()
    database = f"corpus_scale_{os.getpid()}"
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="corpus-scale-"))
    create_database(database)
    try:
        bench(args, work, database)
    finally:
        if args.keep:
            print(f"kept database {database} and {work}")
        else:
            drop_database(database)
            subprocess.run(["rm", "-rf", str(work)], check=False)
    print(f"\nbench took {time.perf_counter() - started:.0f} s, load {load()}")


if __name__ == "__main__":
    main()
