"""Time the daily tools over the corpus: render a conversation, serve it, compare two templates.

Usage: .venv/bin/python bench/daily_tools.py [--repeats N]
(every template in ../shared/corpus/templates; analyses are warmed first, as in the lab,
where a template's analysis is stored before any of these run)

Per template, best of N runs, CPU seconds of this process (the machine is shared):
- render: `render_conversation` of a four-message conversation with a tool call, a tool
  response and reasoning (the compiled template is cached per process, as in the lab);
- serve: `serve_advice` (matching against the engines data file);
- tag: `structural_tag` plus its llguidance check, for templates whose calls are JSON;
- compare: `compare_templates` of the template with the next one in the corpus (analyses
  and compiled templates cached, so this is the source diff and 18 renders).
Prints the median and 95th percentile of each.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from analyzer.analysis.pipeline import analyze
from analyzer.analysis.playground import RenderRequest, render_conversation
from analyzer.checks.compare import compare_templates
from analyzer.checks.serve import serve_advice
from analyzer.checks.structural_tag import check_structural_tag, structural_tag
from analyzer.errors import AnalyzerError
from analyzer.model import Analysis
from analyzer.render.loading import TemplateSource, load_template_file

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "templates"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string",
                                                                   "description": "City"}}}}}]
CALL = {"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
REQUEST = RenderRequest.make([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": "Use the tool.",
     "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "21 C"},
    {"role": "user", "content": "Thanks"}], tools=TOOLS)


def best_of(repeats: int, work: Callable[[], object]) -> float | None:
    """Best CPU time of `repeats` runs, or None when the template refuses the work."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        try:
            work()
        except AnalyzerError:
            return None
        times.append(time.process_time() - start)
    return min(times)


def jobs_for(source: TemplateSource, analysis: Analysis,
             other: TemplateSource) -> dict[str, Callable[[], object]]:
    """The four timed jobs of one template."""
    return {
        "render": lambda: render_conversation(source, REQUEST),
        "serve": lambda: serve_advice(analysis),
        "tag": lambda: (structural_tag(source, analysis),
                        check_structural_tag(source, analysis)),
        "compare": lambda: compare_templates(source, other),
    }


def summary(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"{name:8} n={len(times):3}  median {statistics.median(times) * 1000:7.2f} ms  "
            f"p95 {p95 * 1000:7.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sources = [load_template_file(path) for path in sorted(CORPUS.glob("*.jinja"))]
    analyses = [analyze(source) for source in sources]  # warm, as stored in the lab
    results: dict[str, list[float]] = {"render": [], "serve": [], "tag": [], "compare": []}
    for index, (source, analysis) in enumerate(zip(sources, analyses, strict=True)):
        other = sources[(index + 1) % len(sources)]
        for name, work in jobs_for(source, analysis, other).items():
            spent = best_of(args.repeats, work)
            if spent is not None:
                results[name].append(spent)
    for name, times in results.items():
        print(summary(name, times))


if __name__ == "__main__":
    main()
