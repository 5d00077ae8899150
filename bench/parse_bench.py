"""Benchmark parsing of ../shared/bench-inputs: full parse MB/s, streaming cost, correctness.

Run from the repo root: `.venv/bin/python -m bench.parse_bench` (or `python bench/parse_bench.py`).
Two sets of parsers are timed: the generated ones (bench/generated.py: analysis of the
request's template + analyzer.generator) and the hand-built ones (bench/handbuilt.py), which
use only the markers an analysis reports and show what a hand-tuned grammar costs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from analyzer.mapper import to_message  # noqa: E402
from analyzer.message import Message  # noqa: E402
from analyzer.peg import Parser  # noqa: E402
from analyzer.stream import StreamParser, accumulate  # noqa: E402
from bench import generated, handbuilt  # noqa: E402

KINDS = {
    "generated": (generated.GRAMMARS, "generated parsers (bench/generated.py)"),
    "handbuilt": (handbuilt.GRAMMARS, "hand-built grammars (bench/handbuilt.py)"),
}

INPUTS = REPO / ".." / "shared" / "bench-inputs"
SIZES = ("25k", "50k", "100k")


# CPU time of this process: the machine is shared, and wall time would count other processes.
clock = time.process_time


def full_parse_seconds(parser: Parser, text: str, repeats: int) -> float:
    """Return the best time of several full parses (parse + mapping to a message)."""
    best = float("inf")
    for _ in range(repeats):
        started = clock()
        to_message(parser.parse(text))
        best = min(best, clock() - started)
    return best


def stream_once(parser: Parser, text: str, chunk: int) -> tuple[float, Message]:
    """Stream text in chunks of the given size; return the total time and the message."""
    started = clock()
    stream = StreamParser(parser)
    deltas = []
    for at in range(0, len(text), chunk):
        deltas.extend(stream.feed(text[at : at + chunk]))
    deltas.extend(stream.finish())
    return clock() - started, accumulate(deltas)


def stream_seconds(parser: Parser, text: str, chunk: int, repeats: int) -> tuple[float, Message]:
    """Return the best streaming time of several runs, and the streamed message."""
    runs = [stream_once(parser, text, chunk) for _ in range(repeats)]
    return min(seconds for seconds, _ in runs), runs[0][1]


def mismatches(message: Message, expected: dict[str, Any]) -> list[str]:
    """Compare a message with an expected-*.json file (names, JSON-equal arguments, content)."""
    problems = []
    calls = expected["tool_calls"]
    if len(message.tool_calls) != len(calls):
        problems.append(f"{len(message.tool_calls)} calls, expected {len(calls)}")
    for index, (got, want) in enumerate(zip(message.tool_calls, calls, strict=False)):
        if got.name != want["name"] or json.loads(got.arguments) != want["arguments"]:
            problems.append(f"call {index} differs")
    if message.content.strip() != expected.get("content", "").strip():
        problems.append("content differs")
    return problems


def bench_format(
    name: str, tools: list[dict[str, Any]], args: argparse.Namespace, kind: str = "generated"
) -> list[str]:
    """Measure one format with one kind of parser; return its table rows."""
    parser = KINDS[kind][0][name](tools)
    rows = []
    stream_times: dict[tuple[int, str], float] = {}
    for size in SIZES:
        text = (INPUTS / name / f"output-{size}.txt").read_text(encoding="utf-8")
        expected = json.loads((INPUTS / name / f"expected-{size}.json").read_text("utf-8"))
        seconds = full_parse_seconds(parser, text, args.repeats)
        one_shot = to_message(parser.parse(text))
        problems = mismatches(one_shot, expected)
        cells = [f"{len(text.encode()) / seconds / 1e6:8.1f}"]
        for chunk in (16, 1):
            elapsed, streamed = stream_seconds(parser, text, chunk, args.stream_repeats)
            stream_times[(chunk, size)] = elapsed
            if streamed != one_shot:
                problems.append(f"{chunk}-byte stream differs from one-shot")
            cells.append(f"{elapsed:7.3f}")
        verdict = "ok" if not problems else "; ".join(problems)
        calls = len(one_shot.tool_calls)
        rows.append(f"{name:17} {size:>5} {calls:6} {' '.join(cells)}   {verdict}")
    for chunk in (16, 1):
        ratio = stream_times[(chunk, "100k")] / stream_times[(chunk, "50k")]
        rows.append(f"{name:17} T100/T50 with {chunk:2}-byte chunks: {ratio:.2f}")
    return rows


def main() -> int:
    """Print the benchmark table."""
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeats", type=int, default=20, help="full parses per input")
    options.add_argument("--stream-repeats", type=int, default=3, help="streams per input")
    options.add_argument("--format", choices=sorted(handbuilt.GRAMMARS), action="append")
    options.add_argument("--parsers", choices=(*KINDS, "both"), default="both",
                         help="which parsers to time (default: both)")
    args = options.parse_args()
    if not INPUTS.is_dir():
        print(f"bench inputs not found at {INPUTS}", file=sys.stderr)
        return 2
    tools = json.loads((INPUTS / "tools.json").read_text(encoding="utf-8"))
    for kind in KINDS if args.parsers == "both" else (args.parsers,):
        print(f"parser: {KINDS[kind][1]}; CPU seconds, best of several runs")
        print(f"{'format':17} {'size':>5} {'calls':>6} {'MB/s':>8} {'16B s':>7} {'1B s':>7}"
              "   check")
        for name in args.format or list(handbuilt.GRAMMARS):
            for row in bench_format(name, tools, args, kind):
                print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
