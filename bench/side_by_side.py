"""Side by side: our generated parsers against SGLang's detectors, same bytes, one process.

Run from the repo root: `.venv/bin/python bench/side_by_side.py [--size 100k] [--rounds 5]`.
For each benchmark format SGLang has a detector for, on `../shared/bench-inputs/<format>/
output-<size>.txt`: the whole parse (ours: parse + mapping to an OpenAI message) and streams in
16-byte and 1-byte chunks (ours: deltas folded by a client-side Accumulator; SGLang's: its call
items joined per tool index). The two sides take turns within each round, so a change in the
machine's load hits both alike; each cell is the best round, in CPU seconds of this process.
Both sides' calls (names, JSON-equal arguments) must equal each other and `expected-*.json`;
reading them for that check is not timed.
Without SGLang installed (the optional `bench-peers` extra) its column is skipped.
"""

from __future__ import annotations

import argparse
import json
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
from bench import generated, peers  # noqa: E402

INPUTS = REPO / ".." / "shared" / "bench-inputs"
SHAPES = ("whole", "16-byte stream", "1-byte stream")
WHOLE_REPEATS = 10
clock = time.process_time  # the machine is shared: wall time would count other processes


def calls_of(message: Message) -> peers.Calls:
    """Return a message's calls in the form both sides are compared in."""
    return peers.Calls(tuple((c.name, json.loads(c.arguments)) for c in message.tool_calls))


def our_side(parser: Parser) -> peers.Peer:
    """Wrap our parser like a peer: one-shot parse, and a stream folded by a client."""

    def whole(text: str) -> Message:
        return to_message(parser.parse(text))

    def stream(chunks: Iterable[str]) -> Message:
        streamer, client = StreamParser(parser), Accumulator()
        for chunk in chunks:
            for delta in streamer.feed(chunk):
                client.add(delta)
        for delta in streamer.finish():
            client.add(delta)
        return client.message()

    return peers.Peer("ours", whole, stream, calls_of)


def timed(work: Callable[[], Any], calls: Callable[[Any], peers.Calls]) -> tuple[
        float, peers.Calls]:
    """Run work once; return its CPU seconds and the calls of its result (read untimed)."""
    started = clock()
    result = work()
    return clock() - started, calls(result)


def shape_runs(side: peers.Peer, text: str) -> dict[str, Callable[[], Any]]:
    """Return the three timed shapes for one side (chunks cut before timing)."""
    chunks16 = [text[at : at + 16] for at in range(0, len(text), 16)]
    chunks1 = list(text)
    return {
        "whole": lambda: side.whole(text),
        "16-byte stream": lambda: side.stream(chunks16),
        "1-byte stream": lambda: side.stream(chunks1),
    }


def compare(sides: list[peers.Peer], text: str, rounds: int) -> dict[tuple[str, str], Any]:
    """Time every side on every shape, taking turns; return best seconds and calls per cell."""
    runs = {side.name: shape_runs(side, text) for side in sides}
    best: dict[tuple[str, str], Any] = {}
    for _ in range(rounds):
        for shape in SHAPES:
            # A whole parse takes milliseconds: several per round, or the machine's noise
            # outweighs the difference.
            for side in sides * (WHOLE_REPEATS if shape == "whole" else 1):
                seconds, calls = timed(runs[side.name][shape], side.calls)
                key = (side.name, shape)
                if key not in best or seconds < best[key][0]:
                    best[key] = (seconds, calls)
    return best


def expected_calls(name: str, size: str) -> peers.Calls:
    """Read the calls an output holds from its expected-*.json."""
    expected = json.loads((INPUTS / name / f"expected-{size}.json").read_text("utf-8"))
    return peers.Calls(tuple((c["name"], c["arguments"]) for c in expected["tool_calls"]))


def rows(
    name: str, sides: list[peers.Peer], size: str, rounds: int, columns: int
) -> list[str]:
    """Measure one format; return its table rows (markdown), with `columns` side columns."""
    text = (INPUTS / name / f"output-{size}.txt").read_text(encoding="utf-8")
    best = compare(sides, text, rounds)
    want = expected_calls(name, size)
    lines = []
    for shape in SHAPES:
        cells = [f"{name} {size}", shape]
        for side in sides:
            seconds, calls = best[(side.name, shape)]
            speed = f" ({len(text.encode()) / seconds / 1e6:.1f} MB/s)" if shape == "whole" else ""
            cells.append(f"{seconds:.4f} s{speed}")
        if len(sides) > 1:
            ratio = best[(sides[1].name, shape)][0] / best[(sides[0].name, shape)][0]
            cells.append(f"{ratio:.2f}x")
        elif columns > 1:
            cells += ["no SGLang detector for this format", "–"]
        same = all(best[(side.name, shape)][1] == want for side in sides)
        cells.append(f"{len(want.items)} calls, " + ("same" if same else "DIFFERENT"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    """Print the side-by-side table."""
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--size", choices=("25k", "50k", "100k"), default="100k")
    options.add_argument("--rounds", type=int, default=5, help="timed rounds (best kept)")
    options.add_argument("--format", choices=generated.FORMATS, action="append")
    args = options.parse_args()
    if not INPUTS.is_dir():
        print(f"bench inputs not found at {INPUTS}", file=sys.stderr)
        return 2
    tools = json.loads((INPUTS / "tools.json").read_text(encoding="utf-8"))
    try:
        others = peers.sglang_peers(tools)
    except ImportError as missing:
        print(f"SGLang column skipped: {missing} (pip install '.[bench-peers]', then "
              "pip install --no-deps sglang==0.5.23; see bench/README.md)", file=sys.stderr)
        others = {}
    header = ["output", "shape", "ours"] + (["SGLang", "SGLang time / ours"] if others else [])
    print("| " + " | ".join([*header, "calls"]) + " |")
    print("|" + "---|" * (len(header) + 1))
    for name in args.format or generated.FORMATS:
        sides = [our_side(generated.GRAMMARS[name](tools))]
        if name in others:
            sides.append(others[name])
        for line in rows(name, sides, args.size, args.rounds, 1 + bool(others)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
