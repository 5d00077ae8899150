"""Time `analyze()` over the corpus: cold (Jinja compile included) and with a compiled template.

Usage: .venv/bin/python bench/analyze_corpus.py [--repeats N] [TEMPLATE.jinja ...]
(defaults to every template in ../shared/corpus/templates)

For each template it reports the best of N runs of
- cold: compile the template and run every comparison (what a first analysis costs),
- warm: run every comparison through an already compiled template,
the number of distinct variants the comparisons show, and the render mode (`lenient` when
transformers refuses the template and the analysis is redone leniently: both runs are timed),
then the median and 95th percentile over the corpus.
Times are CPU seconds of this process (the machine is shared).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from analyzer.analysis.pipeline import Compiler, analyze_uncached, compile_template
from analyzer.model import RenderMode
from analyzer.render.loading import TemplateSource
from analyzer.render.template import ChatTemplate

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "templates"


def best_of(repeats: int, source: TemplateSource, compile: Compiler) -> float:
    """Best CPU time of `repeats` analyses, templates compiled by `compile`."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        analyze_uncached(source, compile)
        times.append(time.process_time() - start)
    return min(times)


def precompiled(source: TemplateSource) -> Compiler:
    """A compiler that compiles each render mode once, before any timing."""
    modes = {mode: compile_template(source.source, "", "", mode) for mode in RenderMode}

    def compiled(text: str, bos: str, eos: str, mode: RenderMode) -> ChatTemplate:
        return modes[mode]

    return compiled


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
    print(f"{'template':50} {'cold ms':>8} {'warm ms':>8} {'variants':>8} {'mode':>8}")
    for path in paths:
        source = TemplateSource(source=path.read_text(encoding="utf-8"))
        compiled = precompiled(source)
        cold.append(best_of(args.repeats, source, compile_template) * 1000)
        warm.append(best_of(args.repeats, source, compiled) * 1000)
        analysis = analyze_uncached(source, compiled)
        variants = len({v.params for c in analysis.comparisons
                       for v in (c.variant_a, c.variant_b) if v is not None})
        print(f"{path.stem[:50]:50} {cold[-1]:8.1f} {warm[-1]:8.1f} {variants:8d} "
              f"{analysis.render_mode.value:>8}")
    for name, values in (("cold", cold), ("warm", warm)):
        print(f"{name}: median {statistics.median(values):.1f} ms, "
              f"p95 {percentile(values, 0.95):.1f} ms over {len(values)} templates")


if __name__ == "__main__":
    main()
