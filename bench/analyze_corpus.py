"""Time `analyze()` over the corpus: cold (Jinja compile included) and with a compiled template.

Usage: .venv/bin/python bench/analyze_corpus.py [--repeats N] [TEMPLATE.jinja ...]
(defaults to every template in ../shared/corpus/templates)

For each template it reports the best of N runs of
- cold: compile the template and run every comparison (what a first analysis costs),
- warm: run every comparison through an already compiled template,
and the number of distinct renders, then the median and 95th percentile over the corpus.
Times are CPU seconds of this process (the machine is shared).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from analyzer.analysis import run_analysis
from analyzer.loading import TemplateSource
from analyzer.render import ChatTemplate
from analyzer.variants import VariantRenderer

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "templates"


def best_of(repeats: int, source: TemplateSource, compiled: ChatTemplate | None) -> float:
    """Best CPU time of `repeats` analyses; compiles each time when compiled is None."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        chat = compiled or ChatTemplate(source.source)
        run_analysis(source, chat)
        times.append(time.process_time() - start)
    return min(times)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("templates", nargs="*", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    paths = args.templates or sorted(CORPUS.glob("*.jinja"))
    cold, warm = [], []
    print(f"{'template':58} {'cold ms':>8} {'warm ms':>8} {'renders':>8}")
    for path in paths:
        source = TemplateSource(source=path.read_text(encoding="utf-8"))
        compiled = ChatTemplate(source.source)
        cold.append(best_of(args.repeats, source, None) * 1000)
        warm.append(best_of(args.repeats, source, compiled) * 1000)
        renderer = VariantRenderer(compiled)
        run_analysis(source, compiled, renderer)
        renders = len(renderer.cache)
        print(f"{path.stem[:58]:58} {cold[-1]:8.1f} {warm[-1]:8.1f} {renders:8d}")
    for name, values in (("cold", cold), ("warm", warm)):
        print(f"{name}: median {statistics.median(values):.1f} ms, "
              f"p95 {percentile(values, 0.95):.1f} ms over {len(values)} templates")


if __name__ == "__main__":
    main()
