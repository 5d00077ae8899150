"""Benchmark parser generation over the corpus: grammar build time per template, uncached.

Run from the repo root: `.venv/bin/python bench/generate_bench.py`. For each corpus template
the analysis is done once (cached, see bench/analyze_corpus.py for its cost), then the grammar
is generated for two requests (no tools; the bench tools with parallel calls) with the
generator's cache cleared. CPU seconds, best of several runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from analyzer.analysis.pipeline import analyze  # noqa: E402
from analyzer.errors import AnalyzerError  # noqa: E402
from analyzer.generator import generate_parser  # noqa: E402
from analyzer.generator.core import cached_grammar  # noqa: E402
from analyzer.parsing.options import ParseOptions  # noqa: E402
from analyzer.render.loading import load_template_file  # noqa: E402

SHARED = REPO / ".." / "shared"
TEMPLATES = SHARED / "corpus" / "templates"
TOOLS = SHARED / "bench-inputs" / "tools.json"


def generation_seconds(path: Path, requests: list[ParseOptions], repeats: int) -> float | None:
    """Return the best time to generate the parsers of all requests (None: no analysis)."""
    try:
        analysis = analyze(load_template_file(path))
    except AnalyzerError:
        return None
    best = float("inf")
    for _ in range(repeats):
        cached_grammar.cache_clear()
        started = time.process_time()
        for options in requests:
            generate_parser(analysis, options)
        best = min(best, time.process_time() - started)
    return best / len(requests)


def main() -> int:
    """Print per-template generation times and the median and p95."""
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeats", type=int, default=5)
    args = options.parse_args()
    tools = json.loads(TOOLS.read_text(encoding="utf-8"))
    requests = [ParseOptions.make(), ParseOptions.make(tools=tools, parallel_tool_calls=True)]
    times = []
    for path in sorted(TEMPLATES.glob("*.jinja")):
        seconds = generation_seconds(path, requests, args.repeats)
        if seconds is not None:
            times.append(seconds)
            print(f"{path.name:60} {seconds * 1000:7.2f} ms")
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    print(f"{len(times)} templates: median {statistics.median(times) * 1000:.2f} ms, "
          f"p95 {p95 * 1000:.2f} ms per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
