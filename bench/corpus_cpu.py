"""CPU per template of a corpus run's work, in one process: what a Celery worker spends.

Usage: .venv/bin/python bench/corpus_cpu.py [--size 90] [--warmup 10] [--profile FILE]

Builds `--size` distinct templates as `bench/corpus_scale.py` does (the real ones, copied
round-robin, each with its own leading comment) and hands each, as an unsaved Template row, to
what `evaluate_entry_task` calls: `lab.corpus.engine.analyze` (the analysis in the resident
child) then `lab.corpus.engine.evaluate` (verification, vectors, robustness column). No
database, broker or Celery: only the per-template work. CPU is this process's and its reaped
children's (the resident analysis child, stopped before the count), per
template, with the wall time and load average.
`--profile FILE` runs the same loop under cProfile with the analysis in process (no child, so
its functions show up) and writes the stats to FILE (read them with `python -m pstats`).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
# As in a worker: compiled templates go to a code cache folder (a fresh one, so none is loaded).
os.environ.setdefault("LAB_CODE_CACHE_DIR", f"/tmp/corpus-cpu-{os.getpid()}")

import django  # noqa: E402 - the settings module must be named first

django.setup()

from analyzer.analysis.resident import stop_resident  # noqa: E402
from bench.corpus_scale import real_templates  # noqa: E402
from lab.analyses.models import Template  # noqa: E402
from lab.corpus import engine  # noqa: E402


def synthetic(size: int) -> list[Template]:
    """`size` distinct unsaved templates, as corpus_scale writes them."""
    originals = real_templates()
    rows = []
    for number in range(size):
        stem, source = originals[number % len(originals)]
        text = f"{{# corpus-scale copy {number} #}}{source}"
        rows.append(Template(source=text, sha256=f"copy-{number}", template_name="default"))
    return rows


def evaluate_all(rows: list[Template]) -> int:
    """Do a corpus task's work for every row; return how many failed."""
    errors = 0
    for row in rows:
        try:
            analysis_json, _ = engine.analyze(row)
            engine.evaluate(row, analysis_json)
        except engine.AnalyzerError:
            errors += 1
    return errors


def cpu_seconds() -> float:
    """User + system CPU of this process and of its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def profiled(rows: list[Template], out: str) -> None:
    """Run the loop under cProfile with the analysis in this process."""
    from analyzer.analysis.pipeline import analyze_source
    from analyzer.canonical import analysis_to_json
    from lab.analyses import engine as analyses_engine

    def in_process(template: Template) -> str:
        return analysis_to_json(analyze_source(analyses_engine.source_of(template)))

    analyses_engine.analyze_template = in_process
    profile = cProfile.Profile()
    profile.runcall(evaluate_all, rows)
    profile.dump_stats(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=90)
    parser.add_argument("--warmup", type=int, default=10, help="templates done before timing")
    parser.add_argument("--profile", metavar="FILE")
    args = parser.parse_args()
    everything = synthetic(args.warmup + args.size)
    warmup, rows = everything[:args.warmup], everything[args.warmup:]
    evaluate_all(warmup)  # imports and first-use setup, which a long-lived worker pays once
    stop_resident()  # the timed templates' resident child is a fresh one, reaped after them
    if args.profile:
        profiled(rows, args.profile)
        return
    cpu, wall = cpu_seconds(), time.perf_counter()
    errors = evaluate_all(rows)
    stop_resident()  # its CPU is counted once it is reaped
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"{args.size} templates: {cpu / args.size * 1000:.1f} ms CPU per template, "
          f"{wall / args.size * 1000:.1f} ms wall per template, {errors} analysis errors, "
          f"load {load}")


if __name__ == "__main__":
    main()
