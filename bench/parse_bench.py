"""Benchmark parsing of ../shared/bench-inputs: full parse MB/s, streaming cost, correctness.

Run from the repo root: `.venv/bin/python -m bench.parse_bench` (or `python bench/parse_bench.py`).
Two sets of parsers are timed: the generated ones (bench/generated.py: analysis of the
request's template + analyzer.generator) and the hand-built ones (bench/handbuilt.py), which
use only the markers an analysis reports and show what a hand-tuned grammar costs.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from analyzer.parsing.mapper import to_message  # noqa: E402
from analyzer.parsing.message import Message  # noqa: E402
from analyzer.parsing.stream import Accumulator, StreamParser  # noqa: E402
from analyzer.peg import Parser  # noqa: E402
from bench import generated, handbuilt  # noqa: E402

Grammars = dict[str, Callable[..., Parser]]
KINDS: dict[str, tuple[Grammars, str]] = {
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
    """Stream text in chunks of the given size; return the total time and the message.

    The deltas are folded as they come, as a client does: keeping every delta object alive
    would time the garbage collector walking the benchmark's own list."""
    started = clock()
    stream = StreamParser(parser)
    client = Accumulator()
    for at in range(0, len(text), chunk):
        for delta in stream.feed(text[at : at + chunk]):
            client.add(delta)
    for delta in stream.finish():
        client.add(delta)
    return clock() - started, client.message()


def stream_seconds(
    parser: Parser, texts: dict[str, str], chunk: int, repeats: int
) -> dict[str, tuple[float, Message]]:
    """Return each size's best streaming time of several runs, and its streamed message.

    The sizes take turns within each round, so a change in the machine's load hits them
    alike instead of skewing the ratio between them."""
    best: dict[str, tuple[float, Message]] = {}
    for _ in range(repeats):
        for size, text in texts.items():
            seconds, message = stream_once(parser, text, chunk)
            if size not in best or seconds < best[size][0]:
                best[size] = (seconds, message)
    return best


def stream_work(parser: Parser, text: str) -> tuple[int, int]:
    """Stream text in 1-byte chunks under a profiler; return the function calls made and the
    characters handed to the engine (both deterministic, unlike times)."""
    stream = StreamParser(parser)
    scanned = 0
    profiler = cProfile.Profile()
    profiler.enable()
    for char in text:
        scanned += len(stream.buffer) + 1
        stream.feed(char)
    stream.finish()
    profiler.disable()
    return pstats.Stats(profiler).total_calls, scanned  # type: ignore[attr-defined]


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
    texts = {size: (INPUTS / name / f"output-{size}.txt").read_text(encoding="utf-8")
             for size in SIZES}
    streams = {chunk: stream_seconds(parser, texts, chunk, args.stream_repeats)
               for chunk in (16, 1)}
    rows = []
    for size, text in texts.items():
        expected = json.loads((INPUTS / name / f"expected-{size}.json").read_text("utf-8"))
        seconds = full_parse_seconds(parser, text, args.repeats)
        one_shot = to_message(parser.parse(text))
        problems = mismatches(one_shot, expected)
        cells = [f"{len(text.encode()) / seconds / 1e6:8.1f}"]
        for chunk, timed in streams.items():
            elapsed, streamed = timed[size]
            if streamed != one_shot:
                problems.append(f"{chunk}-byte stream differs from one-shot")
            cells.append(f"{elapsed:7.3f}")
        verdict = "ok" if not problems else "; ".join(problems)
        calls = len(one_shot.tool_calls)
        rows.append(f"{name:17} {size:>5} {calls:6} {' '.join(cells)}   {verdict}")
    for chunk, timed in streams.items():
        ratio = timed["100k"][0] / timed["50k"][0]
        rows.append(f"{name:17} T100/T50 with {chunk:2}-byte chunks: {ratio:.2f}")
    return rows


def work_rows(name: str, tools: list[dict[str, Any]], kind: str) -> list[str]:
    """Count the work of 1-byte streaming at 50k and 100k; return its table rows."""
    parser = KINDS[kind][0][name](tools)
    work = {}
    for size in ("50k", "100k"):
        text = (INPUTS / name / f"output-{size}.txt").read_text(encoding="utf-8")
        work[size] = (*stream_work(parser, text), len(text))
    (calls50, scanned50, chars50), (calls100, scanned100, chars100) = work["50k"], work["100k"]
    return [f"{name:17} {calls100 / chars100:9.1f} {calls100 / calls50:11.3f} "
            f"{scanned100 / scanned50:13.3f} {chars100 / chars50:11.3f}"]


def main() -> int:
    """Print the benchmark table."""
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--repeats", type=int, default=20, help="full parses per input")
    options.add_argument("--stream-repeats", type=int, default=3, help="streams per input")
    options.add_argument("--format", choices=sorted(handbuilt.GRAMMARS), action="append")
    options.add_argument("--parsers", choices=(*KINDS, "both"), default="both",
                         help="which parsers to time (default: both)")
    options.add_argument("--work", action="store_true",
                         help="count the work of 1-byte streaming instead of timing it")
    args = options.parse_args()
    if not INPUTS.is_dir():
        print(f"bench inputs not found at {INPUTS}", file=sys.stderr)
        return 2
    tools = json.loads((INPUTS / "tools.json").read_text(encoding="utf-8"))
    kinds = KINDS if args.parsers == "both" else (args.parsers,)
    if args.work:
        print_work(args, tools, kinds)
        return 0
    for kind in kinds:
        print(f"parser: {KINDS[kind][1]}; CPU seconds, best of several runs")
        print(f"{'format':17} {'size':>5} {'calls':>6} {'MB/s':>8} {'16B s':>7} {'1B s':>7}"
              "   check")
        for name in args.format or list(handbuilt.GRAMMARS):
            for row in bench_format(name, tools, args, kind):
                print(row, flush=True)
    return 0


def print_work(args: argparse.Namespace, tools: list[dict[str, Any]], kinds: Iterable[str]) -> None:
    """Print the work counts of 1-byte streaming: per character, and 100k over 50k."""
    for kind in kinds:
        print(f"parser: {KINDS[kind][1]}; 1-byte streaming, counted (deterministic)")
        print(f"{'format':17} {'calls/char':>9} {'calls ratio':>11} {'scanned ratio':>13} "
              f"{'chars ratio':>11}")
        for name in args.format or list(handbuilt.GRAMMARS):
            for row in work_rows(name, tools, kind):
                print(row, flush=True)


if __name__ == "__main__":
    sys.exit(main())
